// LeNet on Fashion-MNIST: trains the network of Torch7's tutorials with SGD and momentum,
// on one device or, with --devices listing several, through a DataParallelTable.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cunn/cunn.h"
#include "examples/LeNet.h"

namespace {

struct Options {
  int epochs = 5;
  int64_t batchSize = 128;
  float learningRate = 0.05f;
  float momentum = 0.9f;
  float weightDecay = 5e-4f;
  float learningRateDecay = 2e-4f;
  uint64_t seed = 1;
  int threads = 1;
  std::string dataDir = nn::FashionMnist::kDefaultFolder;
  std::string devices = "cpu:0";
  std::string save;
  std::string resume;
  std::string metrics;
  int64_t limit = 0;
  bool checkNumerics = false;
  bool profile = false;
};

const char* kUsage =
    "Usage: lenet [options]\n"
    "  --epochs N         training epochs (5)\n"
    "  --batch-size N     global mini-batch size (128)\n"
    "  --lr X             learning rate (0.05)\n"
    "  --momentum X       SGD momentum (0.9)\n"
    "  --weight-decay X   SGD weight decay (0.0005)\n"
    "  --lr-decay X       learning rate at step t is lr / (1 + t * X), as Torch7's optim.sgd (0.0002)\n"
    "  --seed N           seed of initialisation and data order (1)\n"
    "  --threads N        compute threads of each device (1)\n"
    "  --devices LIST     devices, e.g. cpu:0,cpu:1 (cpu:0); several train data-parallel\n"
    "  --data-dir DIR     Fashion-MNIST IDX files (/usr/share/datasets/fashion-mnist)\n"
    "  --save FILE        save a checkpoint (safetensors) after every epoch and on Ctrl-C\n"
    "  --resume FILE      continue from a checkpoint; --epochs counts from the start\n"
    "  --metrics FILE     write one JSON object per epoch (JSON lines)\n"
    "  --limit N          train on the first N training images only (all)\n"
    "  --check-numerics   stop at the first NaN or Inf, naming the module and the pass\n"
    "  --profile          after each epoch, print the time of each module's forward and backward\n"
    "                     (with several devices, the first device's replica) and of the step's other parts\n";

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg == "--check-numerics") {
      o.checkNumerics = true;
      continue;
    }
    if (arg == "--profile") {
      o.profile = true;
      continue;
    }
    NN_CHECK(i + 1 < argc, "lenet: option " << arg << " needs a value\n" << kUsage);
    const std::string value = argv[++i];
    auto number = [&](double low) {
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      NN_CHECK(end && *end == '\0' && std::isfinite(v) && v >= low,
               "lenet: " << arg << " expects a number >= " << low << ", got '" << value << "'");
      return v;
    };
    if (arg == "--epochs")
      o.epochs = static_cast<int>(number(1));
    else if (arg == "--batch-size")
      o.batchSize = static_cast<int64_t>(number(1));
    else if (arg == "--lr")
      o.learningRate = static_cast<float>(number(0));
    else if (arg == "--momentum")
      o.momentum = static_cast<float>(number(0));
    else if (arg == "--weight-decay")
      o.weightDecay = static_cast<float>(number(0));
    else if (arg == "--lr-decay")
      o.learningRateDecay = static_cast<float>(number(0));
    else if (arg == "--seed")
      o.seed = static_cast<uint64_t>(number(0));
    else if (arg == "--threads")
      o.threads = static_cast<int>(number(1));
    else if (arg == "--devices")
      o.devices = value;
    else if (arg == "--data-dir")
      o.dataDir = value;
    else if (arg == "--save")
      o.save = value;
    else if (arg == "--resume")
      o.resume = value;
    else if (arg == "--metrics")
      o.metrics = value;
    else if (arg == "--limit")
      o.limit = static_cast<int64_t>(number(1));
    else
      NN_CHECK(false, "lenet: unknown option " << arg << "\n" << kUsage);
  }
  return o;
}

std::vector<nn::Device> parseDevices(const std::string& list) {
  std::vector<nn::Device> devices;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) devices.push_back(nn::Device::parse(item));
  NN_CHECK(!devices.empty(), "lenet: --devices lists no device");
  return devices;
}

// Pixels to zero mean and unit variance over the training set (its mean and deviation).
void standardize(nn::Tensor& images) {
  const float mean = 0.2860f, deviation = 0.3530f;
  float* p = images.data();
  for (int64_t i = 0, n = images.numel(); i < n; ++i) p[i] = (p[i] - mean) / deviation;
}

std::atomic<bool> gInterrupted{false};
void onInterrupt(int) { gInterrupted = true; }

// The lines of an earlier metrics file for epochs up to `epochs`, so a resumed run extends it.
std::string metricsUpTo(const std::string& path, int64_t epochs) {
  std::ifstream in(path);
  std::string kept, line;
  while (std::getline(in, line)) {
    const auto at = line.find("\"epoch\": ");
    if (at != std::string::npos && std::atoll(line.c_str() + at + 9) <= epochs) kept += line + "\n";
  }
  return kept;
}

double seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// Fraction of test images whose most likely class is the label.
double accuracy(nn::Module& model, const nn::FashionMnist& test, const nn::Device& device) {
  model.evaluate();
  nn::BatchIterator batches(test.images, test.labels, 1000, nn::BatchOptions{false, false, 0});
  nn::Tensor x, y;
  int64_t correct = 0;
  while (batches.next(x, y)) {
    const std::vector<float> out = model.forward(x.to(device)).toVector();
    const std::vector<float> labels = y.toVector();
    for (size_t i = 0; i < labels.size(); ++i) {
      size_t best = 0;
      for (size_t c = 1; c < 10; ++c)
        if (out[i * 10 + c] > out[i * 10 + best]) best = c;
      correct += best == static_cast<size_t>(labels[i]);
    }
  }
  model.training();
  return static_cast<double>(correct) / static_cast<double>(test.size());
}

int run(const Options& o) {
  // From the start: Ctrl-C while the data loads stops after the first step, with a checkpoint.
  std::signal(SIGINT, onInterrupt);
  const std::vector<nn::Device> devices = parseDevices(o.devices);
  nn::setNumThreads(o.threads);
  nn::setCheckNumerics(o.checkNumerics);
  nn::setProfiling(o.profile);
  nn::manualSeed(o.seed);

  nn::FashionMnist train(nn::FashionMnist::Split::Train, o.dataDir);
  nn::FashionMnist test(nn::FashionMnist::Split::Test, o.dataDir);
  standardize(train.images);
  standardize(test.images);
  if (o.limit > 0 && o.limit < train.size()) {
    train.images = train.images.narrow(0, 0, o.limit);
    train.labels = train.labels.narrow(0, 0, o.limit);
  }

  nn::ModulePtr model = examples::lenet();
  // The images need no gradient: the first convolution skips its gradInput (a third of its
  // backward), and a DataParallelTable gathers none.
  model->setGradInputNeeded(false);
  if (devices.size() > 1) {
    auto table = std::make_shared<nn::DataParallelTable>(0, true, true);
    table->add(model, devices);
    model = table;
  } else {
    model->to(devices[0]);
  }
  std::cout << model->toString() << "\n";
  nn::ClassNLLCriterion criterion;
  nn::SgdOptions sgdOptions;
  sgdOptions.learningRate = o.learningRate;
  sgdOptions.momentum = o.momentum;
  sgdOptions.dampening = 0.f;
  sgdOptions.weightDecay = o.weightDecay;
  sgdOptions.learningRateDecay = o.learningRateDecay;
  nn::SGD sgd(model->getParameters(), sgdOptions);

  nn::BatchIterator batches(train.images, train.labels, o.batchSize, nn::BatchOptions{true, false, o.seed});
  nn::TrainingState state{model.get(), &sgd, &batches, 0};
  std::string metricsText;
  if (!o.resume.empty()) {
    nn::loadCheckpoint(state, o.resume);
    std::printf("resumed from %s after %lld epoch(s)\n", o.resume.c_str(), static_cast<long long>(state.epochsDone));
    if (!o.metrics.empty()) metricsText = metricsUpTo(o.metrics, state.epochsDone);
  }
  nn::Tensor x, y;
  const bool interactive = isatty(fileno(stderr));
  for (int epoch = static_cast<int>(state.epochsDone) + 1; epoch <= o.epochs; ++epoch) {
    const double start = seconds();
    double lossSum = 0;
    int64_t seen = 0, steps = 0;
    // --profile: the step's parts outside the modules; the modules time themselves.
    nn::resetProfile(*model);
    nn::PassTime dataTime, zeroTime, criterionTime, sgdTime, computeTime;
    auto nextBatch = [&] {
      nn::ScopedTimer timer(dataTime);
      if (!batches.next()) return false;
      x.resize_(batches.input.sizes(), devices[0]).copy_(batches.input);
      y.resize_(batches.target.sizes(), devices[0]).copy_(batches.target);
      return true;
    };
    while (nextBatch()) {
      {
        nn::ScopedTimer computeTimer(computeTime);
        {
          nn::ScopedTimer timer(zeroTime);
          model->zeroGradParameters();
        }
        const nn::Tensor& out = model->forward(x);
        {
          nn::ScopedTimer timer(criterionTime);
          lossSum += criterion.forward(out, y);
          criterion.backward(out, y);
        }
        model->backward(x, criterion.gradInput);
        nn::ScopedTimer timer(sgdTime);
        sgd.step();
      }
      seen += x.size(0);
      ++steps;
      if (gInterrupted) {
        // The step is whole; the checkpoint resumes at the next batch of this epoch.
        state.epochsDone = epoch - 1;
        if (!o.save.empty()) nn::saveCheckpoint(state, o.save);
        std::fprintf(stderr, "\ninterrupted in epoch %d after %lld images%s%s\n", epoch, static_cast<long long>(seen),
                     o.save.empty() ? "; no checkpoint written (no --save)" : "; checkpoint written to ",
                     o.save.c_str());
        return 130;
      }
      // A live line on a terminal; four lines an epoch into a log.
      const bool report =
          interactive ? steps % 20 == 0 : steps % std::max<int64_t>(1, batches.batchesPerEpoch() / 4) == 0;
      if (report)
        std::fprintf(stderr, "%sepoch %d  %6lld/%lld  loss %.4f  %.0f images/s%s", interactive ? "\r" : "", epoch,
                     static_cast<long long>(seen), static_cast<long long>(train.size()), lossSum / steps,
                     seen / (seconds() - start), interactive ? "" : "\n");
    }
    const double elapsed = seconds() - start;
    if (o.profile) {
      if (interactive) std::fprintf(stderr, "\r%72s\r", "");
      const nn::PassTime step{dataTime.seconds + computeTime.seconds, computeTime.calls};
      std::printf("%s", nn::profileTable(*model,
                                         {{"batch and copy to the device", dataTime},
                                          {"zeroGradParameters", zeroTime},
                                          {"criterion", criterionTime},
                                          {"SGD step", sgdTime}},
                                         step)
                            .c_str());
    }
    const double trainLoss = lossSum / steps;
    const double testAccuracy = accuracy(*model, test, devices[0]);
    if (interactive) std::fprintf(stderr, "\r%72s\r", "");
    std::printf("epoch %d  train loss %.4f  test accuracy %.4f  %.1f s  %.0f images/s\n", epoch, trainLoss,
                testAccuracy, elapsed, seen / elapsed);
    std::fflush(stdout);
    state.epochsDone = epoch;
    if (!o.save.empty()) nn::saveCheckpoint(state, o.save);
    if (!o.metrics.empty()) {
      std::ostringstream line;
      line << "{\"epoch\": " << epoch << ", \"train_loss\": " << trainLoss << ", \"test_accuracy\": " << testAccuracy
           << ", \"seconds\": " << elapsed << ", \"images_per_second\": " << seen / elapsed << ", \"devices\": [";
      for (size_t i = 0; i < devices.size(); ++i) line << (i ? ", " : "") << "\"" << devices[i].str() << "\"";
      line << "], \"threads\": " << o.threads << ", \"batch_size\": " << o.batchSize << "}\n";
      metricsText += line.str();
      nn::writeFileAtomically(o.metrics, metricsText);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "\n" << e.what() << "\n";
    return 1;
  }
}

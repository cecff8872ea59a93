// Trains one network of the benchmark suite (bench/Networks.h) on synthetic data and prints one
// JSON line: images/s of the timed steps, the work per image, the final loss. PyTorch's side is
// bench/networks_torch.py; tools/bench-suite.sh runs both alternately.
//
//   train_synthetic --network vgg [--batch-size 128] [--steps 20] [--warmup 3] [--threads 1]
//                   [--devices cpu:0,cpu:1] [--precision highest|high|medium] [--autocast bf16|fp16|off]
//                   [--no-amx] [--profile] [--metrics FILE]
//
// --autocast runs the model's forward and backward in an nn::Autocast scope, the criterion outside
// it, as examples/lenet does (the master weights and the optimizer stay float32; no loss scaling).
// --no-amx holds the precision medium's products to vdpbf16ps on a CPU with AMX (nn/cpu/AmxGemm.h),
// to compare the two; the JSON line names the bfloat16 products' instructions ("bf16_kernel").
//
// A step is what examples/lenet does: zeroGradParameters, forward, ClassNLLCriterion forward
// (the loss read on the host) and backward, backward, SGD (lr 0.01, momentum 0.9, dampening 0,
// weight decay 5e-4). The images need no gradient (setGradInputNeeded(false)). Several devices
// train through a DataParallelTable(0, flattenParams, useNCCL) over them. The batches are
// eight fixed batches of normal noise with random labels, taken in turn, already on the first
// device, so that the figures are those of training alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/Networks.h"
#include "cunn/cunn.h"
#include "examples/Trainer.h"
#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/nn.h"

namespace {

struct Flags {
  std::string network = "lenet";
  int64_t batchSize = 128, steps = 20, warmup = 3;
  int threads = 1;
  std::string devices = "cpu:0";
  std::string precision = "highest";
  std::string autocast = "off";
  bool profile = false;
  bool noAmx = false;
  std::string metrics;
};

[[noreturn]] void usage(const std::string& error) {
  std::fprintf(stderr,
               "train_synthetic: %s\n"
               "usage: train_synthetic --network lenet|mlp|vgg|resnet [--batch-size N] [--steps N] [--warmup N]\n"
               "                       [--threads N] [--devices cpu:0,cpu:1] [--precision highest|high|medium]\n"
               "                       [--autocast bf16|fp16|off] [--no-amx] [--profile] [--metrics FILE]\n",
               error.c_str());
  std::exit(2);
}

int64_t positive(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || v <= 0) usage(flag + " expects a positive integer, got '" + value + "'");
  return v;
}

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--profile") {
      f.profile = true;
      continue;
    }
    if (arg == "--no-amx") {
      f.noAmx = true;
      continue;
    }
    if (i + 1 >= argc) usage(arg == "--help" ? "help" : "unknown flag or missing value: " + arg);
    const std::string value = argv[++i];
    if (arg == "--network")
      f.network = value;
    else if (arg == "--batch-size")
      f.batchSize = positive(arg, value);
    else if (arg == "--steps")
      f.steps = positive(arg, value);
    else if (arg == "--warmup")
      f.warmup = positive(arg, value);
    else if (arg == "--threads")
      f.threads = static_cast<int>(positive(arg, value));
    else if (arg == "--devices")
      f.devices = value;
    else if (arg == "--metrics")
      f.metrics = value;
    else if (arg == "--precision")
      f.precision = value;
    else if (arg == "--autocast") {
      if (value != "bf16" && value != "fp16" && value != "off")
        usage("--autocast expects bf16, fp16 or off, got '" + value + "'");
      f.autocast = value;
    }
    else
      usage("unknown flag " + arg);
  }
  return f;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int run(const Flags& f) {
  const std::vector<nn::Device> devices = examples::parseDevices("train_synthetic", f.devices);
  nn::setNumThreads(f.threads);
  nn::setFloat32MatmulPrecision(nn::matmulPrecisionNamed(f.precision));
  const nn::DType autocast = nn::autocastNamed(f.autocast.c_str());
  nn::cpu::allowAmx(!f.noAmx);
  nn::setProfiling(f.profile);
  nn::manualSeed(1);

  bench::Network net = bench::makeNetwork(f.network);
  const nn::ModulePtr model = examples::placeOnDevices(net.model, devices);
  nn::ClassNLLCriterion criterion;
  nn::SGD sgd(model->getParameters(), nn::SgdOptions{0.01f, 0, 5e-4f, 0.9f, 0.f, false});

  std::vector<int64_t> sizes{f.batchSize};
  sizes.insert(sizes.end(), net.sampleSizes.begin(), net.sampleSizes.end());
  nn::Generator data(2);
  std::vector<nn::Tensor> inputs, targets;
  for (int b = 0; b < 8; ++b) {
    nn::Tensor x = nn::Tensor::empty(sizes);
    x.normal_(data, 0.f, 1.f);
    std::vector<float> labels(static_cast<size_t>(f.batchSize));
    for (float& label : labels) label = static_cast<float>(data.below(static_cast<uint64_t>(net.classes)));
    inputs.push_back(x.to(devices[0]));
    targets.push_back(nn::Tensor::fromVector({f.batchSize}, labels).to(devices[0]));
  }

  double loss = 0;
  // --profile: the step's parts outside the modules; the modules time themselves.
  nn::PassTime zeroTime, criterionTime, stepTime;
  auto step = [&](int64_t k) {
    const nn::Tensor& x = inputs[k % inputs.size()];
    const nn::Tensor& y = targets[k % targets.size()];
    {
      nn::ScopedTimer timer(zeroTime);
      model->zeroGradParameters();
    }
    const nn::Tensor* out = nullptr;
    {
      nn::Autocast scope(autocast);
      out = &model->forward(x);
    }
    {
      nn::ScopedTimer timer(criterionTime);
      loss = criterion.forward(*out, y);
      criterion.backward(*out, y);
    }
    nn::Autocast scope(autocast);
    model->backward(x, criterion.gradInput);
    nn::ScopedTimer timer(stepTime);
    sgd.step();
  };
  for (int64_t k = 0; k < f.warmup; ++k) step(k);
  nn::resetProfile(*model);
  zeroTime = criterionTime = stepTime = nn::PassTime{};
  const double start = now();
  for (int64_t k = 0; k < f.steps; ++k) step(f.warmup + k);
  const double elapsed = now() - start;
  const double imagesPerSecond = static_cast<double>(f.steps * f.batchSize) / elapsed;

  if (f.profile)
    std::printf(
        "%s",
        nn::profileTable(*model,
                         {{"zeroGradParameters", zeroTime}, {"criterion", criterionTime}, {"optimizer step", stepTime}},
                         nn::PassTime{elapsed, static_cast<int64_t>(f.steps)})
            .c_str());
  // The first replica (a DataParallelTable's is the module given to it) gives the work per image.
  const bench::ForwardWork work = bench::forwardWork(*net.model);
  std::ostringstream line;
  line << "{\"network\": \"" << net.name << "\", \"images_per_second\": " << imagesPerSecond
       << ", \"forward_macs\": " << work.multiplyAdds << ", \"first_layer_macs\": " << work.firstLayer
       << ", \"loss\": " << loss << ", \"steps\": " << f.steps << ", \"batch_size\": " << f.batchSize
       << ", \"threads\": " << f.threads << ", \"devices\": " << devices.size() << ", \"precision\": \"" << f.precision
       << "\", \"bf16_kernel\": \"" << nn::cpu::bf16GemmKernel() << "\"}\n";
  std::cout << line.str();
  if (!f.metrics.empty()) {
    std::ofstream out(f.metrics);
    out << line.str();
    NN_CHECK(out.good(), "train_synthetic: cannot write " << f.metrics);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = parse(argc, argv);
  try {
    return run(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_synthetic: %s\n", e.what());
    return 1;
  }
}

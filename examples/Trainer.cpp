// The training program shared by the examples: flags, data, the optimizers, checkpoints,
// metrics and progress around the network an example gives (examples/Trainer.h).
#include "examples/Trainer.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "cunn/cunn.h"
#include "cunn/distributed/DistributedDataParallelTable.h"
#include "cunn/distributed/Launch.h"
#include "nn/onnx/Export.h"

namespace examples {
namespace {

// The flags' values: the example's defaults (TrainingDefaults), then what the command line sets.
struct Options : TrainingDefaults {
  float learningRate = -1.f;  // unset: the optimizer's default (defaultLearningRate)
  bool momentumGiven = false;
  bool learningRateDecayGiven = false;
  bool weightDecayGiven = false;
  uint64_t seed = 1;
  std::string dataDir = nn::FashionMnist::kDefaultFolder;
  std::string data;
  std::string save;
  std::string resume;
  std::string metrics;
  std::string exportOnnx;
  std::string logdir;
  int64_t limit = 0;
  double bucketMegabytes = nn::DistributedDataParallelTable::Options().bucketMegabytes;
  bool checkNumerics = false;
  bool profile = false;
  // Batch normalisation over the whole batch of every device and process (nn::setSyncBatchNorm).
  bool syncBn = false;
  // The float32 matmul precision (nn/core/MatmulPrecision.h).
  nn::MatmulPrecision precision = nn::MatmulPrecision::highest;
  // The products of forward and backward in an autocast scope of this type (nn/core/Autocast.h);
  // Float32: none.
  nn::DType autocast = nn::DType::Float32;
  // The loss scale (nn/optim/GradScaler.h): "dynamic", "off" or a number; empty: dynamic under
  // float16 autocast, else off.
  std::string lossScale;
  // The learning-rate schedule (PyTorch's schedulers; none: Torch7's decay alone).
  std::string lrSchedule = "none";
  int64_t warmupEpochs = 0;
  double lrGamma = 0.1;
  int64_t lrStep = 0;  // 0: a third of the epochs
  std::vector<int64_t> lrMilestones;
  double minLr = 0;
  // Gradient clipping between backward and the step; 0: none.
  double clipGradNorm = 0;
  double clipGradValue = 0;
  // The decay of the average of the weights the test accuracy is measured on; 0: none.
  double ema = 0;
  // Micro-batches each batch is cut into, their gradients accumulated for one step.
  int64_t accumulate = 1;
};

// The usage text, with the example's name and defaults.
std::string usage(const ExampleSettings& settings) {
  const TrainingDefaults& s = settings.defaults;
  std::ostringstream u;
  u << "Usage: " << settings.name << " [options]\n"
    << "  --epochs N         training epochs (" << s.epochs << ")\n"
    << "  --batch-size N     global mini-batch size (" << s.batchSize << ")\n"
    << "  --optimizer NAME   sgd, adam, adagrad, rmsprop (Torch7's optim functions) or adamw (PyTorch's) ("
    << s.optimizer << ")\n"
    << "  --lr X             learning rate (sgd " << s.sgdLearningRate
    << ", adam 0.001, adamw 0.001, adagrad 0.01, rmsprop 0.001)\n"
    << "  --momentum X       SGD momentum (" << s.momentum << ")\n"
    << "  --weight-decay X   weight decay (" << s.weightDecay << "; adamw's, apart from the gradient, 0.01)\n"
    << "  --lr-schedule NAME none, step, multistep, exponential, cosine, onecycle or plateau: PyTorch's\n"
    << "                     schedulers, stepped after each epoch (onecycle after each step; plateau on\n"
    << "                     the epoch's train loss); with one, --lr-decay is 0 unless given (none)\n"
    << "  --warmup-epochs N  the rate rises linearly from a tenth of it over the first N epochs, then the\n"
    << "                     schedule runs (0)\n"
    << "  --lr-gamma X       step, multistep, exponential, plateau: the factor of each decay (0.1)\n"
    << "  --lr-step N        step: epochs between decays (a third of the epochs)\n"
    << "  --lr-milestones L  multistep: the epochs of the decays, e.g. 10,20\n"
    << "  --min-lr X         cosine, plateau: the lowest rate (0)\n"
    << "  --clip-grad-norm X scale the gradients down to a global L2 norm of at most X before each step,\n"
    << "                     as PyTorch's clip_grad_norm_ (0: off)\n"
    << "  --clip-grad-value X clamp each gradient into [-X, X] before each step (0: off)\n"
    << "  --accumulate K     cut each batch into K micro-batches whose gradients add up to the batch's,\n"
    << "                     for one step (less memory); only the last one's are summed over the\n"
    << "                     processes under mpirun and over the devices (1)\n"
    << "  --ema X            keep an exponential moving average of the weights (decay X, e.g. 0.999),\n"
    << "                     updated after each step, and measure the test accuracy on it (0: off)\n"
    << "  --sync-bn          batch normalisation by the statistics of the whole batch of every device\n"
    << "                     and process (PyTorch's SyncBatchNorm), not each one's slice\n"
    << "  --lr-decay X       learning rate at step t is lr / (1 + t * X), as Torch7's optim (" << s.learningRateDecay
    << "; not rmsprop)\n"
    << "  --seed N           seed of initialisation and data order (1)\n"
    << "  --threads N        compute threads of each device (" << s.threads << ")\n"
    << "  --devices LIST     devices, e.g. cpu:0,cpu:1 (" << s.devices << "); several train data-parallel;\n"
    << "                     cuda:local: under mpirun or srun, the GPU of the process's place on its host\n"
    << "  --bucket-mb X      under mpirun: the processes sum gradients in buckets of X MB, each started\n"
    << "                     as soon as backward has finished it ("
    << nn::DistributedDataParallelTable::Options().bucketMegabytes << ")\n"
    << "  --data-dir DIR     Fashion-MNIST IDX files (" << nn::FashionMnist::kDefaultFolder << ")\n"
    << "  --data DIR         pictures instead: DIR/train and DIR/test, a sub-folder of PNG or JPEG files\n"
    << "                     per class (at most 10), each made grey and 28 x 28\n"
    << "  --save FILE        save a checkpoint (safetensors) after every epoch and on Ctrl-C or SIGTERM\n"
    << "  --resume FILE      continue from a checkpoint; --epochs counts from the start\n"
    << "  --metrics FILE     append one JSON object per epoch (JSON lines)\n"
    << "  --export-onnx FILE after training, write the network as an ONNX model (for ONNX Runtime)\n"
    << "  --logdir DIR       TensorBoard event files: per step the loss, images/s, learning rate and\n"
    << "                     gradient norm,\n"
    << "                     per epoch the train loss, test accuracy and learning rate\n"
    << "  --limit N          train on the first N training images only (all)\n"
    << "  --flip on|off      mirror each training image left to right with probability 1/2 (" << (s.flip ? "on" : "off")
    << ")\n"
    << "  --precision P      float32 matmul precision, as PyTorch's: highest (float32 products), high\n"
    << "                     (TF32 tensor cores on CUDA; float32 on the CPU) or medium (bfloat16 products:\n"
    << "                     AVX512-BF16 CPUs' GEMMs, bfloat16 tensor cores on CUDA) (highest)\n"
    << "  --autocast T       mixed precision: forward and backward products on bf16 (bfloat16) or fp16\n"
    << "                     (float16) operands with float32 sums, everything else float32, or off (off)\n"
    << "  --loss-scale S     multiply the loss gradient by a scale: dynamic (as torch.amp.GradScaler), off\n"
    << "                     or a fixed number; a step with an inf or NaN gradient is skipped\n"
    << "                     (dynamic with --autocast fp16, else off)\n"
    << "  --check-numerics   stop at the first NaN or Inf, naming the module and the pass\n"
    << "  --profile          after each epoch, print the time of each module's forward and backward\n"
    << "                     (with several devices, the first device's replica) and of the step's other parts\n";
  return u.str();
}

// An integer flag's value: decimal digits only (no sign, exponent or hex), from low to high.
uint64_t integer(const std::string& program, const std::string& flag, const std::string& value, uint64_t low,
                 uint64_t high) {
  uint64_t v = 0;
  bool ok = !value.empty();
  for (char c : value) {
    ok = ok && std::isdigit(static_cast<unsigned char>(c));
    ok = ok && !__builtin_mul_overflow(v, uint64_t{10}, &v) && !__builtin_add_overflow(v, uint64_t(c - '0'), &v);
    if (!ok) break;
  }
  NN_CHECK(ok && v >= low && v <= high, program << ": " << flag << " expects an integer from " << low << " to " << high
                                                << ", got '" << value << "'");
  return v;
}

// A number flag's value: a decimal number (digits, a point, an exponent) that a float holds
// as a finite value, at least low.
float number(const std::string& program, const std::string& flag, const std::string& value, float low) {
  bool ok = !value.empty() && value.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double v = ok ? std::strtod(value.c_str(), &end) : 0.0;
  ok = ok && end == value.c_str() + value.size() && std::isfinite(static_cast<float>(v)) && v >= low;
  NN_CHECK(ok,
           program << ": " << flag << " expects a number >= " << low << " that a float holds, got '" << value << "'");
  return static_cast<float>(v);
}

// An on|off flag's value.
bool onOff(const std::string& program, const std::string& flag, const std::string& value) {
  NN_CHECK(value == "on" || value == "off", program << ": " << flag << " expects on or off, got '" << value << "'");
  return value == "on";
}

Options parse(int argc, char** argv, const ExampleSettings& s) {
  Options o;
  static_cast<TrainingDefaults&>(o) = s.defaults;
  const std::string& program = s.name;
  constexpr uint64_t kMaxInt = std::numeric_limits<int32_t>::max();
  constexpr uint64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage(s);
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
    if (arg == "--sync-bn") {
      o.syncBn = true;
      continue;
    }
    NN_CHECK(i + 1 < argc, program << ": option " << arg << " needs a value\n" << usage(s));
    const std::string value = argv[++i];
    if (arg == "--epochs")
      o.epochs = static_cast<int64_t>(integer(program, arg, value, 1, kMaxInt));
    else if (arg == "--batch-size")
      o.batchSize = static_cast<int64_t>(integer(program, arg, value, 1, kMaxInt));
    else if (arg == "--lr")
      o.learningRate = number(program, arg, value, 0);
    else if (arg == "--momentum")
      o.momentum = number(program, arg, value, 0), o.momentumGiven = true;
    else if (arg == "--optimizer")
      o.optimizer = value;
    else if (arg == "--weight-decay")
      o.weightDecay = number(program, arg, value, 0), o.weightDecayGiven = true;
    else if (arg == "--lr-decay")
      o.learningRateDecay = number(program, arg, value, 0), o.learningRateDecayGiven = true;
    else if (arg == "--seed")
      o.seed = integer(program, arg, value, 0, std::numeric_limits<uint64_t>::max());
    else if (arg == "--threads")
      o.threads = static_cast<int>(integer(program, arg, value, 1, nn::kMaxThreads));
    else if (arg == "--devices")
      o.devices = value;
    else if (arg == "--bucket-mb")
      o.bucketMegabytes = number(program, arg, value, 1e-6f);
    else if (arg == "--data-dir")
      o.dataDir = value;
    else if (arg == "--data")
      o.data = value;
    else if (arg == "--save")
      o.save = value;
    else if (arg == "--resume")
      o.resume = value;
    else if (arg == "--metrics")
      o.metrics = value;
    else if (arg == "--export-onnx")
      o.exportOnnx = value;
    else if (arg == "--logdir")
      o.logdir = value;
    else if (arg == "--precision") {
      NN_CHECK(value == "highest" || value == "high" || value == "medium",
               program << ": --precision expects highest, high or medium, got '" << value << "'");
      o.precision = nn::matmulPrecisionNamed(value);
    } else if (arg == "--autocast") {
      NN_CHECK(value == "bf16" || value == "fp16" || value == "off",
               program << ": --autocast expects bf16, fp16 or off, got '" << value << "'");
      o.autocast = nn::autocastNamed(value.c_str());
    } else if (arg == "--loss-scale") {
      char* end = nullptr;
      const double scale = std::strtod(value.c_str(), &end);
      NN_CHECK(value == "dynamic" || value == "off" ||
                   (!value.empty() && end == value.c_str() + value.size() && scale > 0 && scale <= 3.4e38),
               program << ": --loss-scale expects dynamic, off or a number > 0 within a float's range, got '" << value
                       << "'");
      o.lossScale = value;
    } else if (arg == "--flip")
      o.flip = onOff(program, arg, value);
    else if (arg == "--limit")
      o.limit = static_cast<int64_t>(integer(program, arg, value, 1, kMaxInt64));
    else if (arg == "--lr-schedule")
      o.lrSchedule = value;
    else if (arg == "--warmup-epochs")
      o.warmupEpochs = static_cast<int64_t>(integer(program, arg, value, 0, kMaxInt));
    else if (arg == "--lr-gamma")
      o.lrGamma = number(program, arg, value, 0);
    else if (arg == "--lr-step")
      o.lrStep = static_cast<int64_t>(integer(program, arg, value, 1, kMaxInt));
    else if (arg == "--lr-milestones") {
      o.lrMilestones.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        o.lrMilestones.push_back(static_cast<int64_t>(integer(program, arg, item, 1, kMaxInt)));
    } else if (arg == "--min-lr")
      o.minLr = number(program, arg, value, 0);
    else if (arg == "--clip-grad-norm")
      o.clipGradNorm = number(program, arg, value, 0);
    else if (arg == "--clip-grad-value")
      o.clipGradValue = number(program, arg, value, 0);
    else if (arg == "--accumulate")
      o.accumulate = static_cast<int64_t>(integer(program, arg, value, 1, kMaxInt));
    else if (arg == "--ema") {
      number(program, arg, value, 0);               // checked as every number is,
      o.ema = std::strtod(value.c_str(), nullptr);  // and kept as a double: 0.9, not 0.9f
      NN_CHECK(o.ema < 1, program << ": --ema expects a decay below 1, got " << value);
    } else
      NN_CHECK(false, program << ": unknown option " << arg << "\n" << usage(s));
  }
  NN_CHECK(o.optimizer == "sgd" || o.optimizer == "adam" || o.optimizer == "adamw" || o.optimizer == "adagrad" ||
               o.optimizer == "rmsprop",
           program << ": --optimizer expects sgd, adam, adamw, adagrad or rmsprop, got '" << o.optimizer << "'");
  NN_CHECK(o.optimizer == "sgd" || !o.momentumGiven,
           program << ": --momentum applies to --optimizer sgd only, got --optimizer " << o.optimizer);
  NN_CHECK(o.optimizer != "rmsprop" || !o.learningRateDecayGiven,
           program << ": --lr-decay does not apply to --optimizer rmsprop (Torch7's optim.rmsprop has none)");
  const std::set<std::string> schedules{"none", "step", "multistep", "exponential", "cosine", "onecycle", "plateau"};
  NN_CHECK(schedules.count(o.lrSchedule) == 1, program << ": --lr-schedule expects none, step, multistep, exponential, "
                                                       << "cosine, onecycle or plateau, got '" << o.lrSchedule << "'");
  NN_CHECK(o.lrSchedule != "multistep" || !o.lrMilestones.empty(),
           program << ": --lr-schedule multistep needs --lr-milestones");
  NN_CHECK(o.warmupEpochs < o.epochs || o.warmupEpochs == 0,
           program << ": --warmup-epochs " << o.warmupEpochs << " leaves none of the " << o.epochs << " epochs");
  NN_CHECK(
      o.warmupEpochs == 0 || (o.lrSchedule != "onecycle" && o.lrSchedule != "plateau"),
      program << ": --warmup-epochs does not apply to --lr-schedule " << o.lrSchedule << " (onecycle warms up itself)");
  // A schedule sets the rate; Torch7's decay would divide it further.
  if (o.lrSchedule != "none" && !o.learningRateDecayGiven) o.learningRateDecay = 0;
  // AdamW's decay shrinks the weights by lr * decay a step, apart from the gradient, and wants
  // more than the L2 decay an example sets for the others: PyTorch's default unless given.
  if (o.optimizer == "adamw" && !o.weightDecayGiven) o.weightDecay = static_cast<float>(nn::AdamWOptions().weightDecay);
  return o;
}

float defaultLearningRate(const Options& o) {
  if (o.optimizer == "adam" || o.optimizer == "adamw") return 1e-3f;
  if (o.optimizer == "adagrad") return 1e-2f;
  if (o.optimizer == "rmsprop") return 1e-3f;
  return o.sgdLearningRate;
}

// The learning rate of the next step: the optimizer's (a schedule's, where there is one) with
// Torch7's decay, lr / (1 + t * lrDecay).
double nextLearningRate(const Options& o, const nn::Optimizer& optimizer) {
  const double lr = optimizer.learningRate();
  return o.optimizer == "rmsprop" ? lr : lr / (1 + static_cast<double>(optimizer.stepCount()) * o.learningRateDecay);
}

// The schedule of --lr-schedule over `optimizer`, with --warmup-epochs before it; null for none.
// It counts epochs, but onecycle counts training steps (`stepsPerEpoch` of them an epoch).
std::unique_ptr<nn::LrScheduler> makeScheduler(const Options& o, nn::Optimizer& optimizer, int64_t stepsPerEpoch) {
  if (o.lrSchedule == "onecycle")
    return std::make_unique<nn::OneCycleLR>(optimizer, optimizer.learningRate(), o.epochs * stepsPerEpoch);
  if (o.lrSchedule == "plateau")
    return std::make_unique<nn::ReduceLROnPlateau>(optimizer, o.lrGamma, 2, 1e-4, 0, o.minLr);
  if (o.lrSchedule == "none" && o.warmupEpochs == 0) return nullptr;
  std::vector<std::shared_ptr<nn::LrScheduler>> stages;
  if (o.warmupEpochs > 0) stages.push_back(std::make_shared<nn::LinearLR>(optimizer, 0.1, 1.0, o.warmupEpochs));
  const int64_t after = o.epochs - o.warmupEpochs;  // the epochs the schedule itself runs
  if (o.lrSchedule == "step")
    stages.push_back(
        std::make_shared<nn::StepLR>(optimizer, o.lrStep > 0 ? o.lrStep : std::max<int64_t>(1, after / 3), o.lrGamma));
  else if (o.lrSchedule == "multistep")
    stages.push_back(std::make_shared<nn::MultiStepLR>(optimizer, o.lrMilestones, o.lrGamma));
  else if (o.lrSchedule == "exponential")
    stages.push_back(std::make_shared<nn::ExponentialLR>(optimizer, o.lrGamma));
  else if (o.lrSchedule == "cosine")
    stages.push_back(std::make_shared<nn::CosineAnnealingLR>(optimizer, std::max<int64_t>(1, after), o.minLr));
  else
    stages.push_back(std::make_shared<nn::LinearLR>(optimizer, 1.0, 1.0, 1));  // warmup, then the rate as given
  std::vector<int64_t> milestones;
  if (o.warmupEpochs > 0) milestones.push_back(o.warmupEpochs);
  return std::make_unique<nn::SequentialLR>(optimizer, std::move(stages), std::move(milestones));
}

// The optimizer of --optimizer over the model's flat buffers, with the flags' settings.
std::unique_ptr<nn::Optimizer> makeOptimizer(const Options& o, std::pair<nn::Tensor, nn::Tensor> parameters) {
  const float lr = o.learningRate >= 0 ? o.learningRate : defaultLearningRate(o);
  // The settings every optimizer's options share; rmsprop has no learning rate decay.
  auto settings = [&](auto options) {
    options.learningRate = lr;
    options.weightDecay = o.weightDecay;
    if constexpr (!std::is_same_v<decltype(options), nn::RmspropOptions>)
      options.learningRateDecay = o.learningRateDecay;
    return options;
  };
  if (o.optimizer == "adam") return std::make_unique<nn::Adam>(std::move(parameters), settings(nn::AdamOptions()));
  if (o.optimizer == "adamw") return std::make_unique<nn::AdamW>(std::move(parameters), settings(nn::AdamWOptions()));
  if (o.optimizer == "adagrad")
    return std::make_unique<nn::Adagrad>(std::move(parameters), settings(nn::AdagradOptions()));
  if (o.optimizer == "rmsprop")
    return std::make_unique<nn::RMSprop>(std::move(parameters), settings(nn::RmspropOptions()));
  nn::SgdOptions s = settings(nn::SgdOptions());
  s.momentum = o.momentum;
  s.dampening = 0.f;
  return std::make_unique<nn::SGD>(std::move(parameters), s);
}

// --flip: whether image `index` of step `step` of `epoch` is mirrored, a hash of the four
// numbers (SplitMix64's finaliser): no state, so a resumed run mirrors the images an
// uninterrupted one does.
bool mirrored(uint64_t seed, int64_t epoch, int64_t step, int64_t index) {
  uint64_t z =
      seed ^ (static_cast<uint64_t>(epoch) << 48) ^ (static_cast<uint64_t>(step) << 20) ^ static_cast<uint64_t>(index);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return ((z ^ (z >> 31)) & 1) != 0;
}

// Mirrors the chosen images of a host batch [N, C, H, W] left to right, in place.
void flipImages(nn::Tensor& images, uint64_t seed, int64_t epoch, int64_t step) {
  const int64_t n = images.size(0), width = images.size(3);
  const int64_t rows = images.numel() / (n * width);
  float* p = images.data();
  for (int64_t i = 0; i < n; ++i) {
    if (!mirrored(seed, epoch, step, i)) continue;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = p + (i * rows + r) * width;
      for (int64_t a = 0, b = width - 1; a < b; ++a, --b) std::swap(row[a], row[b]);
    }
  }
}

// Fashion-MNIST's training set's mean and deviation: pixels to zero mean and unit variance.
constexpr float kMean = 0.2860f, kDeviation = 0.3530f;

void standardize(nn::Tensor& images) {
  float* p = images.data();
  for (int64_t i = 0, n = images.numel(); i < n; ++i) p[i] = (p[i] - kMean) / kDeviation;
}

// --loss-scale as it applies: "dynamic", "off" or the number; by default dynamic under float16
// autocast, else off.
std::string lossScaleOf(const Options& o) {
  if (!o.lossScale.empty()) return o.lossScale;
  return o.autocast == nn::DType::Float16 ? "dynamic" : "off";
}

// The flags that every process under mpirun must share, a flag a line, and the training images
// they leave: ranks with another batch size, data, limit or seed would train on shards that
// overlap, or stop at other steps (--devices, --threads and the files rank 0 writes may differ).
std::string sharedConfiguration(const Options& o, int64_t trainingImages) {
  std::ostringstream c;
  c << std::setprecision(9) << "--epochs " << o.epochs << "\n--batch-size " << o.batchSize << "\n--optimizer "
    << o.optimizer << "\n--lr " << (o.learningRate >= 0 ? o.learningRate : defaultLearningRate(o)) << "\n--momentum "
    << o.momentum << "\n--weight-decay " << o.weightDecay << "\n--lr-decay " << o.learningRateDecay << "\n--seed "
    << o.seed << "\n--limit " << o.limit << "\n--flip " << (o.flip ? "on" : "off") << "\n--bucket-mb "
    << o.bucketMegabytes << "\n--resume " << o.resume << "\n--lr-schedule " << o.lrSchedule << "\n--warmup-epochs "
    << o.warmupEpochs << "\n--clip-grad-norm " << o.clipGradNorm << "\n--clip-grad-value " << o.clipGradValue
    << "\n--ema " << o.ema << "\n--accumulate " << o.accumulate << "\n--sync-bn " << (o.syncBn ? "on" : "off")
    << "\n--autocast " << nn::dtypeName(o.autocast) << "\n--loss-scale " << lossScaleOf(o) << "\ntraining images "
    << trainingImages << "\n";
  return c.str();
}

// True where mpirun or srun started this process among others (their environment says so).
bool launchedByMpirun() { return nn::launchPlace().size > 1; }

// The signal that asked training to stop (SIGINT or SIGTERM), 0 while none has.
std::atomic<int> gStopSignal{0};
void onStopSignal(int signal) { gStopSignal = signal; }

// A metrics value: the number, or null where it is not finite (JSON has no NaN).
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  // The shortest text that reads back as the same double.
  char text[32];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

// Parameters that are NaN or infinite, of all the model's.
int64_t nonFinite(nn::Module& model) {
  int64_t count = 0;
  for (const nn::Tensor& p : model.parameters().first)
    for (float v : p.toVector()) count += !std::isfinite(v);
  return count;
}

// Saves a checkpoint at `path`, unless the parameters hold NaN or infinite values: then beside
// it, at path.nonfinite, with a warning, so that `path` keeps the last finite checkpoint.
void saveFinite(const nn::TrainingState& state, const std::string& path) {
  const int64_t bad = nonFinite(*state.model);
  if (bad == 0) {
    nn::saveCheckpoint(state, path);
    return;
  }
  const std::string beside = path + ".nonfinite";
  nn::saveCheckpoint(state, beside);
  std::fprintf(stderr,
               "\nwarning: %lld parameters are NaN or infinite; this checkpoint went to %s, and %s keeps the "
               "last finite one\n",
               static_cast<long long>(bad), beside.c_str(), path.c_str());
}

double seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// The training and test sets: Fashion-MNIST's images standardised, or pictures of folders,
// standardised alike by `transform` as the batches are made.
struct Data {
  std::shared_ptr<const nn::Dataset> train, test;
  nn::BatchTransform transform;
  // Of the training set as loaded (Fashion-MNIST's pixels and labels; an image folder's files,
  // classes and file sizes): the processes under mpirun compare it, so that a host with other
  // files at the data's path is refused at the start.
  uint64_t checksum = 0;
};

Data loadData(const Options& o, const std::string& program) {
  if (!o.data.empty()) {
    NN_CHECK(o.limit == 0, program << ": --limit applies to Fashion-MNIST, not to --data");
    nn::ImageFolderOptions options;
    options.channels = 1;
    options.height = nn::FashionMnist::kHeight;
    options.width = nn::FashionMnist::kWidth;
    auto train = std::make_shared<nn::ImageFolder>(o.data + "/train", options);
    auto test = std::make_shared<nn::ImageFolder>(o.data + "/test", options);
    NN_CHECK(train->classes() == test->classes() && train->classes().size() <= nn::FashionMnist::kClasses,
             program << ": expected the same classes, at most " << nn::FashionMnist::kClasses << ", in " << o.data
                     << "/train and " << o.data << "/test");
    std::string names;
    for (const std::string& c : train->classes()) names += (names.empty() ? "" : ", ") + c;
    std::printf("%zu classes (%s), %lld training and %lld test pictures\n", train->classes().size(), names.c_str(),
                static_cast<long long>(train->size()), static_cast<long long>(test->size()));
    uint64_t checksum = 0;
    for (const auto& [file, label] : train->samples()) {
      const std::string name = std::filesystem::path(file).lexically_relative(o.data).string();
      const int64_t bytes[2] = {label, static_cast<int64_t>(std::filesystem::file_size(file))};
      checksum = nn::checksum64(bytes, sizeof bytes, nn::checksum64(name.data(), name.size(), checksum));
    }
    return {train, test, nn::normalize({kMean}, {kDeviation}), checksum};
  }
  nn::FashionMnist train(nn::FashionMnist::Split::Train, o.dataDir);
  nn::FashionMnist test(nn::FashionMnist::Split::Test, o.dataDir);
  standardize(train.images);
  standardize(test.images);
  if (o.limit > 0 && o.limit < train.size()) {
    train.images = train.images.narrow(0, 0, o.limit);
    train.labels = train.labels.narrow(0, 0, o.limit);
  }
  const nn::Tensor images = train.images.contiguous(), labels = train.labels.contiguous();
  const uint64_t checksum = nn::checksum64(labels.data(), sizeof(float) * labels.numel(),
                                           nn::checksum64(images.data(), sizeof(float) * images.numel()));
  return {std::make_shared<nn::TensorDataset>(train.images, train.labels),
          std::make_shared<nn::TensorDataset>(test.images, test.labels), nullptr, checksum};
}

// The first n samples of `set`, prepared as the batches are: an example input.
nn::Tensor firstSamples(const Data& data, int64_t n) {
  nn::BatchOptions options{false, false, 0};
  options.transform = data.transform;
  nn::BatchIterator batches(data.test, std::min(n, data.test->size()), options);
  nn::Tensor x, y;
  batches.next(x, y);
  return x;
}

// Fraction of test images whose most likely class is the label.
double accuracy(nn::Module& model, const Data& data, const nn::Device& device, nn::DType autocast) {
  const nn::Autocast scope(autocast);
  model.evaluate();
  nn::BatchOptions options{false, false, 0};
  options.transform = data.transform;
  nn::BatchIterator batches(data.test, 1000, options);
  nn::Tensor x, y;
  double correct = 0;
  while (batches.next(x, y)) correct += model.forward(x.to(device)).argmax(1).eq(y.to(device)).sum();
  model.training();
  return correct / static_cast<double>(data.test->size());
}

// What the phases of a run share: set up once (start, buildModel, makeBatches, resume), then
// used by every epoch.
struct Run {
  Run(const Options& options, const ExampleSettings& settings) : o(options), s(settings) {}

  const Options& o;
  const ExampleSettings& s;
  // Under mpirun, each process trains its shard of every batch (DistributedDataParallelTable)
  // and rank 0 alone, the lead, prints, evaluates and writes files.
  std::shared_ptr<nn::ProcessGroup> group;
  bool lead = true;
  std::unique_ptr<nn::SummaryWriter> events;
  std::vector<nn::Device> devices;
  Data data;
  // `local`: this process's model, whose checkpoints any number of processes resume; `model`:
  // it, or the DistributedDataParallelTable around it.
  nn::ModulePtr local, model;
  nn::ClassNLLCriterion criterion;
  std::unique_ptr<nn::Optimizer> optimizer;
  std::unique_ptr<nn::LrScheduler> scheduler;
  std::unique_ptr<nn::GradientClipper> clipper;           // where a --clip-grad flag is given
  double gradientNorm = 0;                                // the last step's, before clipping
  std::unique_ptr<nn::ExponentialMovingAverage> average;  // where --ema is given
  std::unique_ptr<nn::GradScaler> scaler;                 // where --loss-scale is not off
  std::optional<nn::BatchIterator> batches;
  nn::TrainingState state;
  nn::Tensor x, y;
  // Summed over the processes: a stop signal after each step, the loss after each epoch.
  nn::Tensor stopShared = nn::Tensor::zeros({1}), lossShared = nn::Tensor::zeros({1});
  const bool interactive = isatty(fileno(stderr));
};

// Whether paths `a` and `b` name one file: through links where both exist, else once the links
// of the folders above them are resolved.
bool sameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error)) return true;
  const std::filesystem::path first = std::filesystem::weakly_canonical(a, error);
  if (error) return a == b;
  const std::filesystem::path second = std::filesystem::weakly_canonical(b, error);
  return error ? a == b : first == second;
}

// --save, --metrics and --export-onnx write a file each, and --resume's file may be written only
// by --save (a checkpoint continued in place): two of them naming one file would destroy a
// checkpoint (metrics appended to it, a network exported over it).
void checkSeparateFiles(const Options& o, const std::string& program) {
  const std::vector<std::pair<std::string, std::string>> files{
      {"--save", o.save}, {"--metrics", o.metrics}, {"--export-onnx", o.exportOnnx}, {"--resume", o.resume}};
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j) {
      const auto& [flag, path] = files[i];
      const auto& [otherFlag, otherPath] = files[j];
      if (path.empty() || otherPath.empty() || (flag == "--save" && otherFlag == "--resume")) continue;
      NN_CHECK(!sameFile(path, otherPath), program << ": " << flag << " " << path << " and " << otherFlag << " "
                                                   << otherPath << " are one file; each needs a file of its own");
    }
}

// Before the model: the stop signals, the processes, the files to write (checked first), the
// library's settings and the data.
void start(Run& r) {
  // From the start: Ctrl-C or SIGTERM while the data loads stops after the first step, with a
  // checkpoint.
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  r.group = launchedByMpirun() ? nn::ProcessGroup::world() : nullptr;
  r.lead = r.group == nullptr || r.group->rank() == 0;
  // First, what the run's speed depends on: the CPU, the kernels that run on it and the precision
  // of their products.
  nn::setFloat32MatmulPrecision(r.o.precision);
  if (r.lead)
    std::cout << nn::cpuInfo() << "\nfloat32 matmul precision on the CPU: " << nn::cpuMatmulPrecisionInfo()
              << std::endl;
  if (r.lead && r.o.autocast != nn::DType::Float32)
    std::cout << "autocast " << nn::dtypeName(r.o.autocast) << ", loss scale " << lossScaleOf(r.o) << std::endl;
  // Before any work: a --save or --metrics that cannot be written fails now, not after an epoch.
  checkSeparateFiles(r.o, r.s.name);
  if (r.lead && !r.o.save.empty()) nn::checkWritable(r.o.save);
  if (r.lead && !r.o.metrics.empty()) nn::checkAppendable(r.o.metrics);
  if (r.lead && !r.o.exportOnnx.empty()) nn::checkWritable(r.o.exportOnnx);
  if (r.lead && !r.o.logdir.empty()) r.events = std::make_unique<nn::SummaryWriter>(r.o.logdir);
  r.devices = parseDevices(r.s.name, r.o.devices);
  nn::setNumThreads(r.o.threads);
  nn::setCheckNumerics(r.o.checkNumerics);
  nn::setProfiling(r.o.profile);
  nn::manualSeed(r.o.seed);
  r.data = loadData(r.o, r.s.name);
}

// The example's network on the devices (wrapped for the processes under mpirun), printed, and
// its optimizer.
void buildModel(Run& r) {
  nn::ModulePtr model = r.s.model();
  if (r.o.syncBn) nn::setSyncBatchNorm(*model);
  r.local = placeOnDevices(model, r.devices);
  nn::DistributedDataParallelTable::Options distributed;
  distributed.bucketMegabytes = r.o.bucketMegabytes;
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(r.data.checksum));
  distributed.configuration =
      sharedConfiguration(r.o, r.data.train->size()) + "training data checksum " + checksum + "\n";
  r.model = r.group ? std::make_shared<nn::DistributedDataParallelTable>(r.local, r.group, distributed) : r.local;
  // Flushed, so that a log shows the model before the first epoch's progress on stderr.
  if (r.lead) std::cout << r.model->toString() << std::endl;
  r.optimizer = makeOptimizer(r.o, r.model->getParameters());
  if (r.o.clipGradNorm > 0 || r.o.clipGradValue > 0 || !r.o.logdir.empty())
    r.clipper = std::make_unique<nn::GradientClipper>(r.optimizer->gradients());
  if (r.o.ema > 0) r.average = std::make_unique<nn::ExponentialMovingAverage>(*r.model, r.o.ema);
  const std::string lossScale = lossScaleOf(r.o);
  if (lossScale != "off") {
    nn::GradScalerOptions scaling;
    if (lossScale != "dynamic") {
      scaling.initScale = std::strtod(lossScale.c_str(), nullptr);
      scaling.dynamic = false;
    }
    r.scaler = std::make_unique<nn::GradScaler>(scaling);
  }
}

// The training batches (this process's shard of each under mpirun): the next is gathered (and
// mirrored, with --flip) on a thread of its own while the current one trains.
void makeBatches(Run& r) {
  nn::BatchOptions batchOptions{true, false, r.o.seed};
  batchOptions.background = true;
  if (r.group) {
    batchOptions.shard = r.group->rank();
    batchOptions.shards = r.group->size();
  }
  batchOptions.transform = r.data.transform;
  if (r.o.flip)
    batchOptions.transform = [seed = r.o.seed, then = r.data.transform](nn::Tensor& images, nn::Tensor& labels,
                                                                        int64_t epoch, int64_t batch) {
      flipImages(images, seed, epoch + 1, batch);  // the example counts epochs from 1
      if (then) then(images, labels, epoch, batch);
    };
  r.batches.emplace(r.data.train, r.o.batchSize, batchOptions);
}

// What a checkpoint holds; with --resume, as the checkpoint left it.
void resume(Run& r) {
  r.scheduler = makeScheduler(r.o, *r.optimizer, r.batches->batchesPerEpoch());
  r.state = nn::TrainingState{r.local.get(), r.optimizer.get(), &*r.batches, 0};
  r.state.scheduler = r.scheduler.get();
  r.state.average = r.average.get();
  r.state.scaler = r.scaler.get();
  if (r.o.resume.empty()) return;
  nn::loadCheckpoint(r.state, r.o.resume);
  if (r.lead)
    std::printf("resumed from %s after %lld epoch(s)%s\n", r.o.resume.c_str(),
                static_cast<long long>(r.state.epochsDone),
                r.state.epochSteps > 0 ? " and some steps of the next" : "");
}

// --profile: the step's parts outside the modules; the modules time themselves.
struct StepTimes {
  nn::PassTime data, zero, criterion, step, compute;
};

// One epoch of this run, as its steps go.
struct Epoch {
  int64_t number = 0;
  double start = 0, elapsed = 0;
  // Its loss summed over its steps, and their count: those before a resume in it included.
  double lossSum = 0;
  int64_t steps = 0;
  // Images of this run in this epoch, all processes' (the data order's position counts them,
  // from seenBefore), and steps of this run.
  int64_t seenBefore = 0, seen = 0, stepsHere = 0;
  StepTimes times;
};

// Starts epoch `number`: its clock, and the loss and steps that a checkpoint had in it.
Epoch beginEpoch(Run& r, int64_t number) {
  Epoch e;
  e.number = number;
  e.start = seconds();
  // The loss of the steps before a resume in this epoch, from the checkpoint.
  e.lossSum = r.state.epochLossSum;
  e.steps = r.state.epochSteps;
  e.seenBefore = r.batches->position();
  r.state.epochLossSum = 0;
  r.state.epochSteps = 0;
  nn::resetProfile(*r.model);
  return e;
}

// The next batch in x and y, on the first device; false after the epoch's last.
bool nextBatch(Run& r, Epoch& e) {
  nn::ScopedTimer timer(e.times.data);
  if (!r.batches->next()) return false;
  r.x.resize_(r.batches->input.sizes(), r.devices[0]).copy_(r.batches->input);
  r.y.resize_(r.batches->target.sizes(), r.devices[0]).copy_(r.batches->target);
  return true;
}

// One training step on x and y; returns its loss.
double trainStep(Run& r, Epoch& e) {
  nn::ScopedTimer computeTimer(e.times.compute);
  {
    nn::ScopedTimer timer(e.times.zero);
    r.model->zeroGradParameters();
  }
  // --accumulate: micro-batches of the batch, each loss's gradient scaled by its share of the
  // batch, so that their sum is the batch's; under mpirun the sums wait for the last.
  const int64_t batch = r.x.size(0), parts = std::min(r.o.accumulate, batch);
  auto* distributed = dynamic_cast<nn::DistributedDataParallelTable*>(r.model.get());
  auto* table = dynamic_cast<nn::DataParallelTable*>(r.local.get());
  double loss = 0;
  for (int64_t part = 0, start = 0; part < parts; ++part) {
    const int64_t size = batch / parts + (part < batch % parts ? 1 : 0);
    const nn::Tensor x = parts == 1 ? r.x : r.x.narrow(0, start, size);
    const nn::Tensor y = parts == 1 ? r.y : r.y.narrow(0, start, size);
    start += size;
    const float share = static_cast<float>(size) / static_cast<float>(batch);
    std::optional<nn::NoSync<nn::DistributedDataParallelTable>> noSyncRanks;
    std::optional<nn::NoSync<nn::DataParallelTable>> noSyncDevices;
    if (part + 1 < parts) {
      if (distributed) noSyncRanks.emplace(*distributed);
      if (table) noSyncDevices.emplace(*table);
    }
    // --autocast: the model's products in the scope, the criterion's float32 outside it.
    std::optional<nn::Autocast> scope;
    scope.emplace(r.o.autocast);
    const nn::Tensor& out = r.model->forward(x);
    scope.reset();
    {
      nn::ScopedTimer timer(e.times.criterion);
      loss += r.criterion.forward(out, y) * share;
      r.criterion.backward(out, y);
      if (r.scaler) r.scaler->scale(r.criterion.gradInput);
    }
    scope.emplace(r.o.autocast);
    r.model->backward(x, r.criterion.gradInput, share);
  }
  e.lossSum += loss;
  nn::ScopedTimer timer(e.times.step);
  // The whole batch's gradient: one device's, the table's first replica's, every rank's sum;
  // unscaled before it is clipped or measured; one with an inf or NaN is neither (the step is skipped).
  if (r.scaler) r.scaler->unscale(*r.optimizer);
  const bool finite = !r.scaler || !r.scaler->foundInf();
  if (finite && r.o.clipGradNorm > 0)
    r.gradientNorm = r.clipper->clipNorm(r.o.clipGradNorm);
  else if (finite && r.events)
    r.gradientNorm = r.clipper->norm();
  if (finite && r.o.clipGradValue > 0) r.clipper->clipValue(r.o.clipGradValue);
  const bool stepped = r.scaler ? r.scaler->step(*r.optimizer) : (r.optimizer->step(), true);
  if (r.scaler) r.scaler->update();
  if (stepped && r.average) r.average->update();
  if (r.o.lrSchedule == "onecycle") r.scheduler->step();
  return loss;
}

// --logdir: this process's loss (its shard's under mpirun) and the epoch's speed so far.
void logStep(Run& r, const Epoch& e, double loss) {
  if (!r.events) return;
  r.events->addScalar("train/loss", loss, r.optimizer->stepCount());
  r.events->addScalar("train/images_per_second", static_cast<double>(e.seen) / (seconds() - e.start),
                      r.optimizer->stepCount());
  r.events->addScalar("train/learning_rate", nextLearningRate(r.o, *r.optimizer), r.optimizer->stepCount());
  r.events->addScalar("train/grad_norm", r.gradientNorm, r.optimizer->stepCount());
}

// The signal that asked to stop, 0 while none has: every process stops after the same step,
// where any was asked to.
int stopSignal(Run& r) {
  int signal = gStopSignal;
  if (r.group) {
    r.stopShared.data()[0] = static_cast<float>(signal);
    r.group->allReduceSum(r.stopShared);
    if (r.stopShared.data()[0] > 0 && signal == 0) signal = SIGTERM;
  }
  return signal;
}

// Stops after a whole step, with the checkpoint resuming at the next batch of this epoch;
// returns the exit status, 128 + the signal.
int stopInEpoch(Run& r, const Epoch& e, int signal) {
  r.state.epochsDone = e.number - 1;
  r.state.epochLossSum = e.lossSum;
  r.state.epochSteps = e.steps;
  if (r.lead && !r.o.save.empty()) saveFinite(r.state, r.o.save);
  if (r.lead)
    std::fprintf(
        stderr, "\n%s: stopped in epoch %lld after %lld images%s%s\n", signal == SIGTERM ? "SIGTERM" : "interrupted",
        static_cast<long long>(e.number), static_cast<long long>(e.seen),
        r.o.save.empty() ? "; no checkpoint written (no --save)" : "; checkpoint written to ", r.o.save.c_str());
  return 128 + signal;
}

// A live line on a terminal; four lines an epoch into a log.
void reportProgress(const Run& r, const Epoch& e) {
  const bool report =
      r.interactive ? e.stepsHere % 20 == 0 : e.stepsHere % std::max<int64_t>(1, r.batches->batchesPerEpoch() / 4) == 0;
  if (report && r.lead)
    std::fprintf(stderr, "%sepoch %lld  %6lld/%lld  loss %.4f  %.0f images/s%s", r.interactive ? "\r" : "",
                 static_cast<long long>(e.number), static_cast<long long>(e.seen),
                 static_cast<long long>(r.data.train->size()), e.lossSum / e.steps, e.seen / (seconds() - e.start),
                 r.interactive ? "" : "\n");
}

// Trains epoch e; returns 0, or the exit status after a stop signal.
int trainEpoch(Run& r, Epoch& e) {
  while (nextBatch(r, e)) {
    const double loss = trainStep(r, e);
    e.seen = r.batches->position() - e.seenBefore;
    ++e.steps;
    ++e.stepsHere;
    logStep(r, e, loss);
    if (const int signal = stopSignal(r)) return stopInEpoch(r, e, signal);
    reportProgress(r, e);
  }
  e.elapsed = seconds() - e.start;
  return 0;
}

// --profile: each module's forward and backward per step, and the step's other parts.
void printProfile(const Run& r, const Epoch& e) {
  if (!r.o.profile || !r.lead) return;
  if (r.interactive) std::fprintf(stderr, "\r%72s\r", "");
  const StepTimes& t = e.times;
  const nn::PassTime step{t.data.seconds + t.compute.seconds, t.compute.calls};
  std::printf("%s", nn::profileTable(*r.model,
                                     {{"batch and copy to the device", t.data},
                                      {"zeroGradParameters", t.zero},
                                      {"criterion", t.criterion},
                                      {"optimizer step", t.step}},
                                     step)
                        .c_str());
}

// The epoch's mean training loss; under mpirun the processes' mean, each process's being the
// mean over its shards.
double meanTrainLoss(Run& r, const Epoch& e) {
  double lossSum = e.lossSum;
  if (r.group) {
    r.lossShared.data()[0] = static_cast<float>(lossSum / r.group->size());
    r.group->allReduceSum(r.lossShared);
    lossSum = r.lossShared.data()[0];
  }
  return e.steps > 0 ? lossSum / static_cast<double>(e.steps) : std::nan("");
}

// --metrics: appended, a line per epoch: the file may be a pipe or a terminal, and a resumed run
// adds to what is there (readers take the last line of each epoch).
void appendMetrics(const Run& r, const Epoch& e, double trainLoss, double testAccuracy) {
  std::ostringstream line;
  line << "{\"epoch\": " << e.number << ", \"train_loss\": " << jsonNumber(trainLoss)
       << ", \"test_accuracy\": " << jsonNumber(testAccuracy) << ", \"seconds\": " << jsonNumber(e.elapsed)
       << ", \"images_per_second\": " << jsonNumber(e.seen / e.elapsed) << ", \"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) line << (i ? ", " : "") << "\"" << r.devices[i].str() << "\"";
  line << "], \"threads\": " << r.o.threads << ", \"batch_size\": " << r.o.batchSize
       << ", \"learning_rate\": " << jsonNumber(nextLearningRate(r.o, *r.optimizer)) << "}\n";
  nn::appendToFile(r.o.metrics, line.str());
}

// The lead's end of an epoch: the test accuracy, the epoch's line, its TensorBoard scalars, the
// checkpoint and the metrics.
void recordEpoch(Run& r, const Epoch& e, double trainLoss) {
  double testAccuracy = 0;
  if (r.average) {
    const nn::AveragedWeights averaged(*r.average);
    testAccuracy = accuracy(*r.model, r.data, r.devices[0], r.o.autocast);
  } else {
    testAccuracy = accuracy(*r.model, r.data, r.devices[0], r.o.autocast);
  }
  if (r.interactive) std::fprintf(stderr, "\r%72s\r", "");
  std::printf("epoch %lld  train loss %.4f  test accuracy %.4f  %.1f s  %.0f images/s\n",
              static_cast<long long>(e.number), trainLoss, testAccuracy, e.elapsed, e.seen / e.elapsed);
  std::fflush(stdout);
  if (r.events) {
    r.events->addScalar("epoch/train_loss", trainLoss, e.number);
    r.events->addScalar("epoch/test_accuracy", testAccuracy, e.number);
    r.events->addScalar("epoch/learning_rate", nextLearningRate(r.o, *r.optimizer), e.number);
  }
  if (!r.o.save.empty()) saveFinite(r.state, r.o.save);
  if (!r.o.metrics.empty()) appendMetrics(r, e, trainLoss, testAccuracy);
}

// --export-onnx: the trained network, for serving; two test images are the example it is traced on.
void exportNetwork(Run& r) {
  if (!r.lead || r.o.exportOnnx.empty()) return;
  nn::exportOnnx(*r.model, firstSamples(r.data, 2).to(r.devices[0]), r.o.exportOnnx);
  std::printf("network exported to %s (ONNX)\n", r.o.exportOnnx.c_str());
}

int train(Run& r) {
  const Options& o = r.o;
  start(r);
  buildModel(r);
  makeBatches(r);
  resume(r);
  for (int64_t epoch = r.state.epochsDone + 1; epoch <= o.epochs; ++epoch) {
    Epoch e = beginEpoch(r, epoch);
    if (const int status = trainEpoch(r, e)) return status;
    printProfile(r, e);
    const double loss = meanTrainLoss(r, e);
    r.state.epochsDone = epoch;
    // The next epoch's rate, before the epoch's checkpoint records the schedule's state.
    if (auto* plateau = dynamic_cast<nn::ReduceLROnPlateau*>(r.scheduler.get()))
      plateau->step(loss);
    else if (r.scheduler && r.o.lrSchedule != "onecycle")
      r.scheduler->step();
    if (r.lead) recordEpoch(r, e, loss);
  }
  exportNetwork(r);
  return 0;
}

int run(const Options& o, const ExampleSettings& s) {
  Run r{o, s};
  try {
    return train(r);
  } catch (const std::exception& e) {
    // Under mpirun an error this rank met alone (a file only rank 0 writes) would leave the
    // others waiting in their next collective until its deadline: the whole job ends now.
    if (r.group && r.group->size() > 1) r.group->abort("\n" + std::string(e.what()), 1);
    throw;
  }
}

}  // namespace

std::vector<nn::Device> parseDevices(const std::string& program, const std::string& list) {
  std::vector<nn::Device> devices;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    // One GPU per process of a host: the launcher's local rank (nn::launchPlace).
    if (item == "cuda:local") item = "cuda:" + std::to_string(nn::launchPlace().localRank);
    devices.push_back(nn::Device::parse(item));
  }
  NN_CHECK(!devices.empty(), program << ": --devices lists no device");
  return devices;
}

nn::ModulePtr placeOnDevices(nn::ModulePtr model, const std::vector<nn::Device>& devices) {
  // The images need no gradient: the first convolution skips its gradInput (a third of its
  // backward), and a DataParallelTable gathers none.
  model->setGradInputNeeded(false);
  if (devices.size() == 1) {
    model->to(devices[0]);
    return model;
  }
  auto table = std::make_shared<nn::DataParallelTable>(0, true, true);
  table->add(model, devices);
  return table;
}

int trainMain(int argc, char** argv, const ExampleSettings& settings) {
  try {
    return run(parse(argc, argv, settings), settings);
  } catch (const std::exception& e) {
    std::cerr << "\n" << e.what() << "\n";
    return 1;
  }
}

}  // namespace examples

// The training program's flags: the usage text, each flag's value checked as it is parsed, and
// the flags that the processes under mpirun must share.
#include "examples/TrainerParts.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

namespace examples::trainer {

namespace {

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
    << "  --reduce-dtype T   under mpirun: the gradients travel between the processes as fp32, or as\n"
    << "                     bf16 (half the bytes), summed in float32 and rounded to bfloat16 (fp32)\n"
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
    << "  --batch-thread B   prepare the next batch on a thread of its own while a step trains: on, off\n"
    << "                     (on the training thread), or auto: on where a core is left for it (CUDA\n"
    << "                     devices, or fewer compute threads than cores) (auto)\n"
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

}  // namespace

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
    else if (arg == "--reduce-dtype") {
      NN_CHECK(value == "fp32" || value == "bf16",
               program << ": --reduce-dtype expects fp32 or bf16, got '" << value << "'");
      o.reduceType = value == "bf16" ? nn::DType::BFloat16 : nn::DType::Float32;
    } else if (arg == "--bucket-mb")
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
    else if (arg == "--batch-thread") {
      NN_CHECK(value == "auto" || value == "on" || value == "off",
               program << ": --batch-thread expects auto, on or off, got '" << value << "'");
      o.batchThread = value;
    } else if (arg == "--limit")
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
    << "\n--autocast " << nn::dtypeName(o.autocast) << "\n--reduce-dtype " << nn::dtypeName(o.reduceType)
    << "\n--loss-scale " << lossScaleOf(o) << "\ntraining images " << trainingImages << "\n";
  return c.str();
}

}  // namespace examples::trainer

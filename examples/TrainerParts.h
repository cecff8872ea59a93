// The parts of the training program (examples/Trainer.h) that its files share: the flags'
// values, the data, what a run and an epoch hold, and what each file gives the others.
// Trainer.cpp runs the phases and the epochs; TrainerFlags.cpp parses the flags,
// TrainerOptimizers.cpp makes the optimizer and its schedule, TrainerData.cpp loads the data and
// measures the accuracy, TrainerCheckpoints.cpp writes and resumes checkpoints, and
// TrainerMetrics.cpp reports the progress, the profile, the epoch's line and the metrics.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cunn/cunn.h"
#include "examples/Trainer.h"
#include "nn/distributed/DistributedDataParallelTable.h"

namespace examples::trainer {

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
  // The type gradients travel in between the processes (--reduce-dtype).
  nn::DType reduceType = nn::DType::Float32;
  bool checkNumerics = false;
  bool profile = false;
  // Where the next batch is prepared (--batch-thread): "on" a thread of its own while a step
  // trains, "off" on the training thread, "auto" on a thread of its own where a core is left for it.
  std::string batchThread = "auto";
  // Batch normalisation over the whole batch of every device and process (nn::setSyncBatchNorm).
  bool syncBn = false;
  // The float32 matmul precision (nn/runtime/MatmulPrecision.h).
  nn::MatmulPrecision precision = nn::MatmulPrecision::highest;
  // The products of forward and backward in an autocast scope of this type (nn/runtime/Autocast.h);
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
  // `local` where it is a table of several devices, else null.
  nn::DataParallelTable* table = nullptr;
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

// TrainerFlags.cpp.
Options parse(int argc, char** argv, const ExampleSettings& s);
std::string lossScaleOf(const Options& o);
std::string sharedConfiguration(const Options& o, int64_t trainingImages);

// TrainerOptimizers.cpp.
float defaultLearningRate(const Options& o);
double nextLearningRate(const Options& o, const nn::Optimizer& optimizer);
std::unique_ptr<nn::LrScheduler> makeScheduler(const Options& o, nn::Optimizer& optimizer, int64_t stepsPerEpoch);
std::unique_ptr<nn::Optimizer> makeOptimizer(const Options& o, std::pair<nn::Tensor, nn::Tensor> parameters);

// TrainerData.cpp.
void flipImages(nn::Tensor& images, uint64_t seed, int64_t epoch, int64_t step);
Data loadData(const Options& o, const std::string& program);
nn::Tensor firstSamples(const Data& data, int64_t n);
double accuracy(nn::Module& model, const Data& data, const nn::Device& device, nn::DType autocast);

// TrainerCheckpoints.cpp.
void saveFinite(const nn::TrainingState& state, const std::string& path);
void checkSeparateFiles(const Options& o, const std::string& program);
void resume(Run& r);

// TrainerMetrics.cpp.
void logStep(Run& r, const Epoch& e, double loss);
void reportProgress(const Run& r, const Epoch& e);
void printProfile(const Run& r, const Epoch& e);
void recordEpoch(Run& r, const Epoch& e, double trainLoss);

// Trainer.cpp: the steady clock, in seconds.
double seconds();

}  // namespace examples::trainer

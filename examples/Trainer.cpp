// The training program shared by the examples: its phases (start, the model, the batches, the
// resume) and its epochs around the network an example gives (examples/Trainer.h). The flags,
// optimizers, data, checkpoints and metrics are in the Trainer*.cpp beside it (TrainerParts.h).
#include "examples/Trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "examples/TrainerParts.h"
#include "nn/distributed/Launch.h"
#include "nn/onnx/Export.h"
#include "nn/runtime/WorkerThreads.h"

namespace examples {
namespace trainer {

double seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

namespace {

// True where mpirun or srun started this process among others (their environment says so).
bool launchedByMpirun() { return nn::launchPlace().size > 1; }

// The signal that asked training to stop (SIGINT or SIGTERM), 0 while none has.
std::atomic<int> gStopSignal{0};
void onStopSignal(int signal) { gStopSignal = signal; }

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
  r.table = dynamic_cast<nn::DataParallelTable*>(r.local.get());
  nn::DistributedDataParallelTable::Options distributed;
  distributed.bucketMegabytes = r.o.bucketMegabytes;
  distributed.reduceType = r.o.reduceType;
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

// Whether the next batch is prepared on a thread of its own while a step trains (--batch-thread).
// auto: where a core is left for it, beside GPUs or beside fewer compute threads than cores, those
// of the job's other processes on this host counted (nn::launchPlace). On a core that computes,
// the thread takes its time from one device, and a synchronous step waits for that device:
// LeNet's table on two CPU devices of two cores trains faster with its batches made on the
// training thread (bench/README.md, "The synchronous limit").
bool batchThread(const Run& r) {
  if (r.o.batchThread != "auto") return r.o.batchThread == "on";
  if (!r.devices[0].isCpu()) return true;
  const int64_t computing = static_cast<int64_t>(r.devices.size()) * nn::numThreads() * nn::launchPlace().localSize;
  return computing < static_cast<int64_t>(nn::usableCores());
}

// The training batches (this process's shard of each under mpirun): the next is gathered (and
// mirrored, with --flip) on a thread of its own while the current one trains, or on the training
// thread (batchThread).
void makeBatches(Run& r) {
  nn::BatchOptions batchOptions{true, false, r.o.seed};
  batchOptions.background = batchThread(r);
  if (r.lead)
    std::cout << "the next batch made "
              << (batchOptions.background ? "on a thread of its own" : "on the training thread") << " (--batch-thread "
              << r.o.batchThread << ")" << std::endl;
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

// The step's own work on the first device outside the model (the batch, the optimizer's step)
// runs on every device's core where the model is a table of CPU devices: its device threads, idle
// between its calls, take their parts of it.
class StepWork {
 public:
  explicit StepWork(Run& r) {
    if (r.table) lend_.emplace(*r.table);
  }

 private:
  std::optional<nn::LendDeviceThreads> lend_;
};

// The next batch in x and y, on the first device; false after the epoch's last. Where the
// batches are on that device already, the iterator fills x and y itself: a copy fewer.
bool nextBatch(Run& r, Epoch& e) {
  nn::ScopedTimer timer(e.times.data);
  StepWork work(r);
  if (r.devices[0] == r.batches->device()) return r.batches->next(r.x, r.y);
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
    r.model->zeroGradParameters();  // a table cuts it over its device threads itself
  }
  // --accumulate: micro-batches of the batch, each loss's gradient scaled by its share of the
  // batch, so that their sum is the batch's; under mpirun the sums wait for the last.
  const int64_t batch = r.x.size(0), parts = std::min(r.o.accumulate, batch);
  auto* distributed = dynamic_cast<nn::DistributedDataParallelTable*>(r.model.get());
  nn::DataParallelTable* table = r.table;
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
  // Element by element: the same floats on any number of threads (the norm above sums: it runs
  // on this thread alone, as on one device).
  StepWork work(r);
  const bool stepped = r.scaler ? r.scaler->step(*r.optimizer) : (r.optimizer->step(), true);
  if (r.scaler) r.scaler->update();
  if (stepped && r.average) r.average->update();
  if (r.o.lrSchedule == "onecycle") r.scheduler->step();
  return loss;
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
}  // namespace trainer

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
    return trainer::run(trainer::parse(argc, argv, settings), settings);
  } catch (const std::exception& e) {
    std::cerr << "\n" << e.what() << "\n";
    return 1;
  }
}

}  // namespace examples

// Checkpoints: model, optimizer and data order in one safetensors file.
#include "nn/io/Checkpoint.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "nn/io/Serialize.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Random.h"

namespace nn {

namespace {

constexpr const char* kStatePrefix = "training.";
constexpr const char* kPermutation = "training.permutation";
constexpr const char* kScheduler = "training.scheduler";
constexpr const char* kAverage = "training.ema";
constexpr const char* kScalerScale = "training.grad_scaler.scale";
constexpr const char* kScalerTracker = "training.grad_scaler.growth_tracker";
// Sample indices are stored as floats, exact below 2^24 (saveCheckpoint checks the count).
constexpr float kMaxSampleIndex = 16777216.f;

// Far beyond any training run, and small enough that the counts fit an int (epochs, as the
// data order's) or a double exactly (steps) in the code that uses them.
constexpr int64_t kMaxEpochs = BatchIterator::kMaxEpoch;
constexpr int64_t kMaxSteps = int64_t{1} << 53;

// Metadata `key` as a count from 0 to `maximum`.
int64_t integer(const Metadata& metadata, const std::string& key, const std::string& path, int64_t maximum) {
  auto it = metadata.find(key);
  NN_CHECK(it != metadata.end(), path << ": not a checkpoint: no '" << key << "' metadata");
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  NN_CHECK(used == it->second.size() && v >= 0 && v <= maximum, path << ": metadata '" << key
                                                                     << "' should be a count from 0 to " << maximum
                                                                     << ", got '" << it->second << "'");
  return v;
}

// Optional metadata `key` as a finite number; 0 where absent (files of earlier versions).
double number(const Metadata& metadata, const std::string& key, const std::string& path) {
  auto it = metadata.find(key);
  if (it == metadata.end()) return 0.0;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  NN_CHECK(!it->second.empty() && end == it->second.c_str() + it->second.size() && std::isfinite(v),
           path << ": metadata '" << key << "' should be a finite number, got '" << it->second << "'");
  return v;
}

}  // namespace

void saveCheckpoint(const TrainingState& state, const std::string& path) {
  NN_CHECK(state.model && state.optimizer && state.batches,
           "nn::saveCheckpoint: model, optimizer and batches are needed");
  std::vector<NamedTensor> tensors = stateDictOnce(*state.model);
  for (const auto& [name, buffer] : state.optimizer->state())
    if (buffer.numel() > 0) tensors.push_back({kStatePrefix + name, buffer});
  const std::vector<int64_t>& order = state.batches->permutation();
  Tensor permutation = Tensor::empty({static_cast<int64_t>(order.size())});
  // Sample indices are exact in float32 below 2^24, far above any data set this loader holds.
  NN_CHECK(order.size() < (size_t{1} << 24), path << ": data sets over 2^24 samples are not supported in checkpoints");
  for (size_t i = 0; i < order.size(); ++i) permutation.data()[i] = static_cast<float>(order[i]);
  tensors.push_back({kPermutation, permutation});

  std::ostringstream generator;
  generator << defaultGenerator().engine();
  Metadata metadata;
  metadata["format"] = "pt";
  metadata["nn.module"] = describeModuleTree(*state.model);
  metadata["training.epochs_done"] = std::to_string(state.epochsDone);
  metadata["training.optimizer"] = state.optimizer->typeName();
  metadata["training.steps"] = std::to_string(state.optimizer->stepCount());
  metadata["training.data_epoch"] = std::to_string(state.batches->epoch());
  metadata["training.data_position"] = std::to_string(state.batches->position());
  metadata["training.generator"] = generator.str();
  char lossSum[32];
  std::snprintf(lossSum, sizeof lossSum, "%.17g", state.epochLossSum);  // every bit of the double
  metadata["training.epoch_loss_sum"] = lossSum;
  metadata["training.epoch_steps"] = std::to_string(state.epochSteps);
  if (state.average) {
    tensors.push_back({kAverage + std::string(".parameters"), state.average->parameters()});
    for (size_t i = 0; i < state.average->buffers().size(); ++i)
      tensors.push_back({kAverage + std::string(".buffer.") + std::to_string(i), state.average->buffers()[i]});
    char decay[32];
    std::snprintf(decay, sizeof decay, "%.17g", state.average->decay());
    metadata[kAverage + std::string(".decay")] = decay;
    metadata[kAverage + std::string(".updates")] = std::to_string(state.average->updates());
  }
  if (state.scaler) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.9g", static_cast<double>(state.scaler->getScale()));  // every bit of the float
    metadata[kScalerScale] = scale;
    metadata[kScalerTracker] = std::to_string(state.scaler->growthTracker());
  }
  if (state.scheduler) {
    metadata[kScheduler] = state.scheduler->typeName();
    for (const auto& [key, value] : state.scheduler->state()) {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", value);
      metadata[std::string(kScheduler) + "." + key] = text;
    }
  }
  writeSafetensors(path, tensors, metadata);
}

int64_t loadCheckpoint(TrainingState& state, const std::string& path) {
  NN_CHECK(state.model && state.optimizer && state.batches,
           "nn::loadCheckpoint: model, optimizer and batches are needed");
  const SafetensorsContents contents = readSafetensors(path);
  const Metadata& m = contents.metadata;
  const int64_t epochsDone = integer(m, "training.epochs_done", path, kMaxEpochs);
  const auto optimizer = m.find("training.optimizer");
  const std::string optimizerName = optimizer != m.end() ? optimizer->second : "sgd";
  NN_CHECK(optimizerName == state.optimizer->typeName(), path << ": the checkpoint holds the state of optimizer '"
                                                              << optimizerName << "', the run uses '"
                                                              << state.optimizer->typeName() << "'");
  const int64_t steps =
      integer(m, m.count("training.steps") ? "training.steps" : "training.sgd_steps", path, kMaxSteps);
  const int64_t dataEpoch = integer(m, "training.data_epoch", path, kMaxEpochs);
  const int64_t dataPosition = integer(m, "training.data_position", path, kMaxSteps);
  const double epochLossSum = number(m, "training.epoch_loss_sum", path);
  const int64_t epochSteps = m.count("training.epoch_steps") ? integer(m, "training.epoch_steps", path, kMaxSteps) : 0;
  // The epoch in progress: a loss needs steps, and each step takes at least one sample.
  NN_CHECK(epochSteps > 0 || epochLossSum == 0,
           path << ": metadata 'training.epoch_loss_sum' is " << epochLossSum
                << " with 'training.epoch_steps' 0: the losses of no steps sum to 0");
  NN_CHECK(epochSteps <= dataPosition, path << ": metadata 'training.epoch_steps' is " << epochSteps
                                            << ", more steps than the " << dataPosition
                                            << " samples of 'training.data_position' could make");
  auto generatorState = m.find("training.generator");
  NN_CHECK(generatorState != m.end(), path << ": not a checkpoint: no 'training.generator' metadata");
  std::mt19937 engine;
  std::istringstream generatorText(generatorState->second);
  generatorText >> engine;
  NN_CHECK(!generatorText.fail(), path << ": metadata 'training.generator' is not a generator state");

  // The optimizer's buffers, in the order of its state(); null where the file has none.
  const auto& buffers = state.optimizer->state();
  std::vector<const Tensor*> saved(buffers.size(), nullptr);
  const Tensor* permutation = nullptr;
  for (const NamedTensor& t : contents.tensors) {
    if (t.name == kPermutation) permutation = &t.value;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (t.name == kStatePrefix + buffers[i].first) saved[i] = &t.value;
  }
  NN_CHECK(permutation != nullptr, path << ": not a checkpoint: no tensor '" << kPermutation << "'");
  std::vector<int64_t> order(static_cast<size_t>(permutation->numel()));
  for (size_t i = 0; i < order.size(); ++i) {
    const float index = permutation->data()[i];
    // Checked before the conversion, which is undefined for NaN and out-of-range floats.
    NN_CHECK(index >= 0 && index < kMaxSampleIndex && std::floor(index) == index,
             path << ": tensor '" << kPermutation << "': element " << i << " is " << index
                  << ", not a sample index (an integer below 2^24)");
    order[i] = static_cast<int64_t>(index);
  }

  // The learning-rate schedule: the file's and the run's are of one type, or neither has one.
  const auto scheduler = m.find(kScheduler);
  const std::string schedulerName = scheduler != m.end() ? scheduler->second : "none";
  const std::string runScheduler = state.scheduler ? state.scheduler->typeName() : "none";
  NN_CHECK(schedulerName == runScheduler, path << ": the checkpoint holds the learning-rate schedule '" << schedulerName
                                               << "', the run uses '" << runScheduler << "'");
  std::map<std::string, double> schedulerState;
  const std::string prefix = std::string(kScheduler) + ".";
  for (const auto& [key, value] : m)
    if (key.compare(0, prefix.size(), prefix) == 0) {
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      NN_CHECK(!value.empty() && end == value.c_str() + value.size(),
               path << ": metadata '" << key << "' should be a number, got '" << value << "'");
      schedulerState[key.substr(prefix.size())] = v;
    }

  // The average of the weights: in the file and the run both, of one decay, or in neither.
  const auto averageDecay = m.find(kAverage + std::string(".decay"));
  const bool fileAverages = averageDecay != m.end();
  NN_CHECK(fileAverages == (state.average != nullptr),
           path << (fileAverages ? ": the checkpoint holds an average of the weights, the run keeps none"
                                 : ": the checkpoint holds no average of the weights, the run keeps one"));
  const Tensor* averageParameters = nullptr;
  std::vector<Tensor> averageBuffers;
  int64_t averageUpdates = 0;
  if (fileAverages) {
    char decay[32];
    std::snprintf(decay, sizeof decay, "%.17g", state.average->decay());
    NN_CHECK(averageDecay->second == decay, path << ": the checkpoint averages the weights with decay "
                                                 << averageDecay->second << ", the run with " << decay);
    averageUpdates = integer(m, kAverage + std::string(".updates"), path, kMaxSteps);
    for (const NamedTensor& t : contents.tensors)
      if (t.name == kAverage + std::string(".parameters")) averageParameters = &t.value;
    NN_CHECK(averageParameters != nullptr, path << ": no tensor '" << kAverage << ".parameters'");
    for (size_t i = 0; i < state.average->buffers().size(); ++i) {
      const std::string name = kAverage + std::string(".buffer.") + std::to_string(i);
      const Tensor* found = nullptr;
      for (const NamedTensor& t : contents.tensors)
        if (t.name == name) found = &t.value;
      NN_CHECK(found != nullptr, path << ": no tensor '" << name << "'");
      averageBuffers.push_back(*found);
    }
  }

  // The loss scale: restored where both the file and the run have one; a file without keeps the
  // run's initial scale, a run without ignores the file's.
  const bool fileScales = m.count(kScalerScale) > 0;
  const double scalerScale = fileScales ? number(m, kScalerScale, path) : 0;
  const int64_t scalerTracker = fileScales ? integer(m, kScalerTracker, path, kMaxSteps) : 0;

  // Check everything before changing anything: the model's load is all or nothing, and the
  // rest is checked here first, the network before what depends on it (the optimizer's state
  // has one value per parameter).
  checkStateDict(*state.model, contents.tensors, path + ": the checkpoint holds another network than this one");
  const Tensor parameters = state.model->getParameters().first;
  for (size_t i = 0; i < buffers.size(); ++i)
    NN_CHECK(saved[i] == nullptr || saved[i]->numel() == parameters.numel(),
             path << ": tensor '" << kStatePrefix << buffers[i].first << "' has " << saved[i]->numel()
                  << " values, the model has " << parameters.numel() << " parameters");
  NN_CHECK(static_cast<int64_t>(order.size()) == state.batches->size(),
           path << ": tensor '" << kPermutation << "' orders " << order.size() << " samples, the data set has "
                << state.batches->size());
  try {
    state.batches->checkRestore(dataEpoch, dataPosition, order);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  // The schedule and the average check their numbers as they take them, before anything else
  // changes.
  if (state.average) {
    try {
      state.average->restore(*averageParameters, averageBuffers, averageUpdates);
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  }
  if (state.scaler && fileScales) {
    try {
      state.scaler->setState(scalerScale, scalerTracker);
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  }
  if (state.scheduler) {
    try {
      state.scheduler->setState(schedulerState);
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  }
  loadStateDict(*state.model, contents.tensors, path);
  state.batches->restore(dataEpoch, dataPosition, order);
  for (size_t i = 0; i < buffers.size(); ++i)
    state.optimizer->setState(buffers[i].first, saved[i] != nullptr ? *saved[i] : Tensor());
  state.optimizer->setStepCount(steps);
  defaultGenerator().engine() = engine;
  state.epochsDone = epochsDone;
  state.epochLossSum = epochLossSum;
  state.epochSteps = epochSteps;
  return epochsDone;
}

}  // namespace nn

// nn::DataParallelTable: the module contract over replicas of a module on several devices.
//
// Note [Data parallel steps] (in full, with each step's table, in docs/data-parallel.md, "The
// steps"). The table composes named steps of DataParallelSteps.h, each tested alone: scatter
// (splitBatch, scatterSlice or scatterInOneCall), run (one thread per device, DeviceThreads),
// gather (gatherParts), reduce (reduceGradients onto the first replica) and broadcast
// (broadcastParameters from it).
// - forward: broadcast where the replicas are stale, scatter the input, run, gather the outputs;
// - backward: scatter gradOutput once, run updateGradInput and accGradParameters in one round,
//   gather the gradInputs, reduce.
// The first replica thus holds the whole batch's gradient, the optimizer works on its parameters
// alone, and it is the table's only child, so that a state dict has the plain module's names.
// The notes below sit beside the code they are about; the profile is in DataParallelProfile.cpp.
#include "nn/parallel/DataParallelTable.h"

#include <set>
#include <utility>

#include "nn/parallel/LendDeviceThreads.h"
#include "nn/tensor/Error.h"

namespace nn {

NN_REGISTER_MODULE(DataParallelTable);

Config::Value FieldCodec<BufferPolicy>::write(BufferPolicy policy) {
  return int64_t{policy == BufferPolicy::Average ? 1 : 0};
}

BufferPolicy FieldCodec<BufferPolicy>::read(const Config& config, const std::string& key, const std::string& who) {
  int64_t value = 0;
  config.read(key, value, who);
  NN_CHECK(value == 0 || value == 1, who << ": expected " << key
                                         << " 0 (broadcast the first replica's buffers) or 1 (average them), got "
                                         << value);
  return value == 1 ? BufferPolicy::Average : BufferPolicy::BroadcastFirst;
}

DataParallelTable::DataParallelTable(const Options& options) : WithOptions(options) {
  NN_CHECK(options.dim >= 0, "nn.DataParallelTable: expected a dimension >= 0, got " << options.dim);
  NN_CHECK(options.devices.empty(), "nn.DataParallelTable: expected options without devices, got "
                                        << options.devices.size()
                                        << ": add(module, devices) gives them with the module");
}

DataParallelTable::~DataParallelTable() = default;

ModulePtr DataParallelTable::create(const Config& c, std::vector<ModulePtr> children) {
  Options options = fromConfig<Options>(c, "nn.DataParallelTable");
  const std::vector<Device> devices = std::exchange(options.devices, {});
  auto table = std::make_shared<DataParallelTable>(options);
  NN_CHECK(children.size() <= 1, "nn.DataParallelTable: expected at most one module, got " << children.size());
  if (!children.empty()) table->add(children[0], devices);
  return table;
}

DataParallelTable& DataParallelTable::add(ModulePtr module, const std::vector<Device>& devices) {
  NN_CHECK(replicas_.empty(), "nn.DataParallelTable.add: the table already holds a module on "
                                  << options_.devices.size() << " device(s); add is called once");
  NN_CHECK(module != nullptr, "nn.DataParallelTable.add: expected a module, got nullptr");
  NN_CHECK(!devices.empty(), "nn.DataParallelTable.add: expected at least one device, got an empty list");
  std::set<Device> seen;
  for (const Device& d : devices) {
    NN_CHECK(seen.insert(d).second, "nn.DataParallelTable.add: device " << d.str() << " is listed twice");
    NN_CHECK(d.type() == devices[0].type(),
             "nn.DataParallelTable.add: expected devices of one type, got " << devices[0].str() << " and " << d.str());
    try {
      checkDeviceExists(d);
    } catch (const Error& e) {
      throw Error(std::string("nn.DataParallelTable.add: ") + e.what());
    }
  }
  module->to(devices[0]);
  replicas_.push_back(module);
  modules_ = {module};
  for (size_t i = 1; i < devices.size(); ++i) {
    ModulePtr replica = module->clone();
    replica->to(devices[i]);
    replicas_.push_back(replica);
  }
  if (!gradInputNeeded())
    for (const ModulePtr& r : replicas_) r->setGradInputNeeded(false);
  if (options_.flattenParams) plan_.collectives.flatten(replicas_);
  options_.devices = devices;
  stale_.assign(devices.size(), false);
  plan_.inputs.resize(devices.size());
  plan_.gradOutputs.resize(devices.size());
  resetProfileDetail();
  threads_ = std::make_unique<DeviceThreads>(devices);
  statistics_ = std::make_unique<ReplicaStatistics>(devices.size());
  communicator_ = makeCommunicator(devices, options_.useNCCL, [this](size_t count, FunctionRef<void(size_t)> task) {
    runTimed(collectivePart_, count, task);
  });
  return *this;
}

// Note [One call at a time]
// A module is used by one thread at a time (README, "What the library promises"). A table
// would not merely compute garbage when two threads call it at once: its step plan and its
// device threads are shared, and such calls crashed, deadlocked or returned wrong outputs.
// So every call that runs a step takes the table (OneCall): a second call from another thread
// while one runs, or from inside the step (threads()'s init function calling forward, which
// runs on a device thread, or on the caller's for the first CPU device), is an nn::Error that
// says so. Other calls on the caller's own thread nest (forward syncs stale replicas).
std::string DataParallelTable::OneCall::refusal(const char* what) {
  return std::string("nn.DataParallelTable: ") + what +
         " called while another call on this table runs (on another thread, or from inside its step, such as "
         "threads()'s init function): a module, a table included, is used by one thread at a time";
}

DataParallelTable::OneCall::OneCall(DataParallelTable& table, const char* what, bool timed) : table_(table) {
  const std::thread::id self = std::this_thread::get_id();
  if (table.caller_.load(std::memory_order_acquire) == self) {
    // Inside a round, on the caller's thread: the first CPU device's task (Note [The caller as
    // the first device] in DeviceThreads.cpp), which is inside the step as a device thread is.
    NN_CHECK(!table.threads_ || !table.threads_->inRound(), refusal(what));
    ++table.callDepth_;
    return;
  }
  std::thread::id none;
  NN_CHECK(table.caller_.compare_exchange_strong(none, self, std::memory_order_acq_rel), refusal(what));
  table.callDepth_ = 1;
  if (timed) timer_.emplace(table.profileTimes_.calls);
}

DataParallelTable::OneCall::~OneCall() {
  timer_.reset();  // the call's time is written while the call still holds the table
  if (--table_.callDepth_ == 0) table_.caller_.store(std::thread::id(), std::memory_order_release);
}

DataParallelTable& DataParallelTable::threads(const std::function<void(const Device&)>& init) {
  OneCall call(*this, "threads");
  checkReady();
  runReplicas(kUntimed, devices().size(), [&](size_t i) { init(devices()[i]); });
  return *this;
}

void DataParallelTable::checkReady() const {
  NN_CHECK(!replicas_.empty(), "nn.DataParallelTable: no module yet; call add(module, devices) first");
}

ModulePtr DataParallelTable::get(size_t index) const {
  NN_CHECK(index < replicas_.size(),
           "nn.DataParallelTable.get: index " << index << " out of range for " << replicas_.size() << " replicas");
  return replicas_[index];
}

int64_t DataParallelTable::deviceRounds() const { return threads_ ? threads_->rounds() : 0; }

bool DataParallelTable::isStale(size_t index) const {
  NN_CHECK(index < replicas_.size(),
           "nn.DataParallelTable.isStale: index " << index << " out of range for " << replicas_.size() << " replicas");
  return stale_[index];
}

std::string DataParallelTable::communicatorName() const { return communicator_ ? communicator_->name() : "none"; }

// Note [Stale replicas]
// Whether replica i must be refreshed before the next forward is the explicit flag
// stale_[i]. It is set by everything after which the first replica's parameters may
// change without this table seeing it: backward (an optimizer step follows),
// updateParameters, apply, and handing out writable parameters (parameters,
// getParameters, stateDict, which nn::loadStateInto writes through). forward syncs
// stale replicas and clears the flags. Writes through handles obtained before the last
// forward are not seen: call syncParameters() (or getParameters() again) after those.
void DataParallelTable::markStale() {
  for (size_t i = 1; i < stale_.size(); ++i) stale_[i] = true;
}

void DataParallelTable::runReplicas(Part part, size_t count, FunctionRef<void(size_t)> task) {
  try {
    runTimed(part, count, task);
  } catch (const Error& e) {
    throw Error(std::string("nn.DataParallelTable: replica ") + e.what());
  }
}

// Part p of a kernel that LendDeviceThreads lends the threads to runs on device p's thread, part
// 0 on the caller's (Note [The caller as the first device]: the devices are CPU devices). The
// device threads take no call's rounds meanwhile (one call at a time), and none of this runs
// inside a round: the caller's task there lends nothing.
void DataParallelTable::runLentParts(int parts, FunctionRef<void(int)> part) {
  OneCall call(*this, "a kernel's parts on its lent device threads", /*timed=*/false);
  threads_->run(static_cast<size_t>(parts), [&](size_t p) { part(static_cast<int>(p)); });
}

// --- broadcast ------------------------------------------------------------------------

void DataParallelTable::syncParameters() {
  OneCall call(*this, "syncParameters");
  checkReady();
  // Buffers unchanged since they were last averaged are equal on every replica already, and
  // the first replica's may have been loaded since: copying the first's is then exact.
  const bool average = bufferPolicy() == BufferPolicy::Average && buffersChanged_;
  collectivePart_ = kBroadcast;
  broadcastParameters(replicas_, *communicator_, plan_.collectives,
                      average ? BufferPolicy::Average : BufferPolicy::BroadcastFirst);
  for (size_t i = 1; i < replicas_.size(); ++i) {
    mirrorModes(*replicas_[0], *replicas_[i]);
    stale_[i] = false;
  }
  buffersChanged_ = false;
}

// Gives every module of `to` the training/evaluation mode of its twin in `from`, top down:
// a container's training()/evaluate() also sets its children, whose own turn comes after.
void DataParallelTable::mirrorModes(const Module& from, Module& to) {
  if (from.isTraining() != to.isTraining()) {
    if (from.isTraining())
      to.training();
    else
      to.evaluate();
  }
  const std::vector<ModulePtr>& a = from.children();
  const std::vector<ModulePtr>& b = to.children();
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) mirrorModes(*a[k], *b[k]);
}

// --- scatter, run, gather -------------------------------------------------------------

// Note [Step plan]
// What the steps work in between calls is one member, plan_: the split of the last forward's
// batch, each device's slices of input and gradOutput, the parts to gather and the replicas'
// tensors for the collectives. A forward makes a new split, which backward reads. The plan
// keeps its memory from step to step (vectors their capacity, slices their storage, resized in
// place; copyAlong rather than narrow, which makes a view), so that a steady training step
// allocates nothing (tests/examples/allocation_test.cpp).

// Note [Scatter by the communicator]
// A batch that is one tensor on the first device, cut along dimension 0 (the usual case: the
// input copied to cuda:0, the gradOutput a criterion computed there), is cut into runs of its
// elements, and the caller hands them all to the communicator's scatter before the round: with
// NCCL, sends from the first device and receives on the others, each on its device's stream;
// with peer copies, a copy per device on that pair's copy stream; with host copies (CPU devices),
// a copy per device on the caller's thread, without a round of the device threads: for LeNet's
// 128 rows a small fraction of a step, far shorter than the step's slowest task. Every other
// batch (a table, a tensor on the host with CUDA devices, another dimension, an empty tensor) is
// copied by each device's thread, its own slice, inside the round. The floats are the same
// either way: each slice is copied.

const Activity& DataParallelTable::scatterTo(size_t i, Activity& into) {
  ScopedTimer timer(profileTimes_.scatters[i]);
  return scatterActivity(plan_.source, dim(), plan_.slices[i], devices()[i], into);
}

bool DataParallelTable::scatterWhole(std::vector<Activity>& into) {
  if (!scattersInOneCall(plan_.source, dim(), devices()[0])) return false;
  ScopedTimer timer(profileTimes_.wholeScatters);
  scatterInOneCall(plan_.source.tensor(), plan_.slices, devices(), *communicator_, into, plan_.scatterParts);
  return true;
}

void DataParallelTable::gather(const Activity& (Module::*part)() const, Activity& into) {
  plan_.parts.clear();
  for (size_t i = 0; i < plan_.active(); ++i) plan_.parts.push_back(&(replicas_[i].get()->*part)());
  try {
    plan_.gatherActivities(plan_.parts, dim(), devices(), into);
  } catch (const Error& e) {
    throw Error(std::string("nn.DataParallelTable: ") + e.what());
  }
}

const Activity& DataParallelTable::updateOutputActivity(const Activity& input) {
  OneCall call(*this, "forward");
  checkReady();
  // The steps walk the input's tables (rowsOf, the scatter) a call per level.
  checkActivityDepth(input, "nn.DataParallelTable: the input");
  int64_t rows = 0;
  try {
    rows = rowsOf(input, dim());
  } catch (const Error& e) {
    throw Error(std::string("nn.DataParallelTable: ") + e.what());
  }
  for (size_t i = 1; i < stale_.size(); ++i)
    if (stale_[i]) {
      syncParameters();
      break;
    }
  contiguousActivity(input, plan_.source);
  plan_.input.forget();
  plan_.gradOutput.forget();
  splitBatch(rows, replicas_.size(), plan_.slices);
  const bool scattered = scatterWhole(plan_.inputs);
  statistics_->begin(plan_.active(), currentStatisticsGroup());
  runReplicas(kForward, plan_.active(), [&](size_t i) {
    replicaPass(i, [&] { replicas_[i]->forward(scattered ? plan_.inputs[i] : scatterTo(i, plan_.inputs[i])); });
  });
  plan_.input.remember(input);
  if (train_) buffersChanged_ = true;
  gather(&Module::outputActivity, outputActivity_);
  return setOutput(outputActivity_);
}

void DataParallelTable::checkGradOutput(const Activity& gradOutput) const {
  NN_CHECK(plan_.active() > 0, "nn.DataParallelTable: backward needs a forward first");
  NN_CHECK(sameShape(outputActivity_, gradOutput), "nn.DataParallelTable: expected gradOutput of size "
                                                       << outputActivity_.describe() << ", got "
                                                       << gradOutput.describe());
}

// Note [One scatter per backward]
// Module::backward, which the table cannot override, calls updateGradInput and then
// accGradParameters with one gradOutput. updateGradInput scatters it and the plan remembers
// which tensor it scattered (its handle, storage and offset); accGradParameters given that same
// tensor before the next forward uses the slices as they are (for a table, every tensor of it
// must be the one scattered). Either can still be called alone, or with another gradOutput,
// and then scatters it itself. The slices stand for the gradOutput
// tensor as a plain module's two passes share one: a replica's updateGradInput that writes into
// its gradOutput (an in-place ReLU at the end) is seen by its accGradParameters, as a plain
// module's would be; values the caller writes into gradOutput between the two calls are not.
bool DataParallelTable::Scattered::holds(const Activity& a, std::vector<Tensor>& scratch) const {
  if (!valid) return false;
  scratch.clear();
  collectTensors(a, scratch);
  if (scratch.size() != tensors.size()) return false;
  for (size_t k = 0; k < scratch.size(); ++k) {
    const Tensor& t = scratch[k];
    if (!t.is(tensors[k]) || t.storage() != storages[k] || t.storageOffset() != offsets[k]) return false;
  }
  return true;
}

void DataParallelTable::Scattered::remember(const Activity& a) {
  forget();
  collectTensors(a, tensors);
  for (const Tensor& t : tensors) {
    storages.push_back(t.storage());
    offsets.push_back(t.storageOffset());
  }
  valid = true;
}

void DataParallelTable::Scattered::forget() {
  valid = false;
  tensors.clear();
  storages.clear();
  offsets.clear();
}

// Note [A table in two places]
// A module may sit in two places of a tree (README, "A module in two places"), and so may a
// table: Sequential{t, Tanh, t}. Backward then reaches the table twice after one forward per
// place, the second place first, each time with that place's input. A plain module computes
// its gradients from the input it is given; the table's slices hold the last forward's input.
// So the plan remembers which input its slices were scattered from, as it does for gradOutput,
// and updateGradInput and accGradParameters given another input scatter that one (its rows
// split as the last forward's were, which needs as many rows). The replicas then see what the
// plain module would, and the table gives its gradients; any other state a replica keeps from
// its last call is the plain module's too.
void DataParallelTable::scatterInputIfNew(Part part, const Activity& input) {
  if (plan_.input.holds(input, plan_.scratchTensors)) return;
  checkActivityDepth(input, "nn.DataParallelTable: backward's input");
  int64_t rows = 0;
  try {
    rows = rowsOf(input, dim());
  } catch (const Error& e) {
    throw Error(std::string("nn.DataParallelTable: ") + e.what());
  }
  const Slice& last = plan_.slices.back();
  NN_CHECK(rows == last.start + last.length,
           header() << ": backward was given an input of " << rows << " rows along dimension " << dim()
                    << ", the last forward's had " << last.start + last.length
                    << " (a table in two places of a tree needs as many rows in each)");
  // Remembered only once every slice is copied: a failure leaves the next call to scatter.
  plan_.input.forget();
  contiguousActivity(input, plan_.source);
  if (!scatterWhole(plan_.inputs)) runReplicas(part, plan_.active(), [&](size_t i) { scatterTo(i, plan_.inputs[i]); });
  plan_.input.remember(input);
}

void DataParallelTable::withGradOutputSlices(Part part, const Activity& gradOutput, bool everyReplica,
                                             FunctionRef<void(size_t)> then) {
  const bool fresh = !plan_.gradOutput.holds(gradOutput, plan_.scratchTensors);
  // Remembered only once every slice is copied: a failure leaves the next call to scatter.
  bool eachThreadCopies = false;
  if (fresh) {
    plan_.gradOutput.forget();
    contiguousActivity(gradOutput, plan_.source);
    eachThreadCopies = !scatterWhole(plan_.gradOutputs);
  }
  statistics_->begin(plan_.active(), currentStatisticsGroup());
  runReplicas(part, everyReplica ? replicas_.size() : plan_.active(), [&](size_t i) {
    if (eachThreadCopies && i < plan_.active()) scatterTo(i, plan_.gradOutputs[i]);
    replicaPass(i, [&] { then(i); });
  });
  if (fresh) plan_.gradOutput.remember(gradOutput);
}

void DataParallelTable::replicaPass(size_t i, FunctionRef<void()> pass) {
  ScopedStatisticsGroup group(statistics_->replica(i));
  try {
    pass();
  } catch (const std::exception& e) {
    statistics_->abort(i, e.what());
    throw;
  }
}

const Activity& DataParallelTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  OneCall call(*this, "updateGradInput");
  checkReady();
  checkGradOutput(gradOutput);
  scatterInputIfNew(kGradInput, input);
  withGradOutputSlices(kGradInput, gradOutput, false,
                       [&](size_t i) { replicas_[i]->updateGradInputIfNeeded(plan_.inputs[i], plan_.gradOutputs[i]); });
  return gatherGradInput();
}

const Activity& DataParallelTable::gatherGradInput() {
  // A replica whose input needs no gradient (setGradInputNeeded(false) on it or on its
  // first layer) leaves its gradInput empty, and so does the table.
  const Activity& first = replicas_[0]->gradInputActivity();
  if (first.isTensor() && first.tensor().numel() == 0) {
    if (gradInput.numel() != 0) gradInput.set_(Tensor());
    return setGradInput(gradInput);
  }
  gather(&Module::gradInputActivity, gradInputActivity_);
  return setGradInput(gradInputActivity_);
}

void DataParallelTable::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  OneCall call(*this, "accGradParameters");
  gradientRound(kGradParameters, input, gradOutput, scale, /*gradInputToo=*/false);
}

// Note [One round per backward]
// backward() (Module::backwardPassesActivity) runs each replica's updateGradInput and then its
// accGradParameters on its device's thread in one round, as Torch7's DataParallelTable:backward
// does, rather than a round for each pass: the two calls one by one wait twice a step for the
// slowest device, and backward once. What each replica computes, and in which order, is the
// same (so are the floats); the table then gathers the gradInputs and reduces the gradients as
// the two calls do. updateGradInput and accGradParameters called one by one keep their rounds,
// and so does a table inside a container, which calls its children's passes one by one.
const Activity& DataParallelTable::backwardPassesActivity(const Activity& input, const Activity& gradOutput,
                                                          float scale) {
  OneCall call(*this, "backward");
  gradientRound(kBackward, input, gradOutput, scale, /*gradInputToo=*/true);
  return gradInputActivity();
}

// Note [Counted gradients]
// The gradients of the replicas other than the first are always counted: already summed
// into the first replica (after a reduce), or copies of its own (after add()). Each of them
// therefore zeroes its gradients on its own thread at the start of every accGradParameters,
// before it adds to them, and zeroGradParameters zeroes only the first replica. This saves a
// pass over the parameters and a round of the device threads in every step. Every replica
// takes part in the reduce, as NCCL requires: those that got no rows of a small batch add
// their zeros.
//
// Note [Deferred reduce]
// With setSync(false) (nn::NoSync), backward leaves each replica's gradients on its device: the
// replicas other than the first keep what they accumulate instead of zeroing it first (Note
// [Counted gradients]: they are "uncounted" now), and no reduce runs. The next backward with
// sync on adds to them and reduces, so the first replica ends with the sum of every micro-batch
// of every replica: one reduce a step instead of one a micro-batch. zeroGradParameters zeroes
// the uncounted gradients too.
void DataParallelTable::gradientRound(Part part, const Activity& input, const Activity& gradOutput, float scale,
                                      bool gradInputToo) {
  checkReady();
  checkGradOutput(gradOutput);
  scatterInputIfNew(part, input);
  markStale();
  const bool counted = !uncounted_;
  withGradOutputSlices(part, gradOutput, true, [&](size_t i) {
    const bool active = i < plan_.active();
    if (active && gradInputToo) replicas_[i]->updateGradInputIfNeeded(plan_.inputs[i], plan_.gradOutputs[i]);
    if (i > 0 && counted) replicas_[i]->zeroGradParameters();  // Note [Counted gradients]
    if (active) replicas_[i]->accGradParametersActivity(plan_.inputs[i], plan_.gradOutputs[i], scale);
  });
  if (gradInputToo) gatherGradInput();
  if (!sync_) {
    uncounted_ = true;  // Note [Deferred reduce]
    return;
  }
  uncounted_ = false;
  collectivePart_ = kReduce;
  reduceGradients(replicas_, *communicator_, plan_.collectives);
}

// --- the rest of the module contract ------------------------------------------------

void DataParallelTable::zeroGradParameters() {
  OneCall call(*this, "zeroGradParameters");
  checkReady();
  if (uncounted_) {
    // The others hold gradients not yet summed (Note [Deferred reduce]): zeroed too.
    runReplicas(kUntimed, replicas_.size(), [&](size_t i) { replicas_[i]->zeroGradParameters(); });
    uncounted_ = false;
    return;
  }
  // The others' are counted (Note [Counted gradients]). The fill is cut over the device threads,
  // idle between rounds (LendDeviceThreads).
  LendDeviceThreads lend(*this);
  replicas_[0]->zeroGradParameters();
}

void DataParallelTable::updateParameters(float learningRate) {
  OneCall call(*this, "updateParameters");
  checkReady();
  LendDeviceThreads lend(*this);  // element by element: the same floats
  replicas_[0]->updateParameters(learningRate);
  markStale();
}

void DataParallelTable::collectParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients) {
  if (replicas_.empty()) return;
  markStale();
  replicas_[0]->collectParameters(values, gradients);
}

std::pair<Tensor, Tensor> DataParallelTable::getParameters() {
  checkReady();
  markStale();
  return replicas_[0]->getParameters();
}

std::vector<NamedTensor> DataParallelTable::stateDict() {
  if (replicas_.empty()) return {};
  if (bufferPolicy() == BufferPolicy::Average && buffersChanged_) {
    collectivePart_ = kBroadcast;
    averageBuffers(replicas_, *communicator_, plan_.collectives);
    buffersChanged_ = false;
  }
  markStale();
  return replicas_[0]->stateDict();
}

void DataParallelTable::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  for (const ModulePtr& r : replicas_) r->setGradInputNeeded(needed);
}

void DataParallelTable::training() {
  train_ = true;
  for (const ModulePtr& r : replicas_) r->training();
}

void DataParallelTable::evaluate() {
  train_ = false;
  for (const ModulePtr& r : replicas_) r->evaluate();
}

void DataParallelTable::clearState() {
  clearResults();
  for (Activity& a : plan_.inputs) a = Activity();
  for (Activity& a : plan_.gradOutputs) a = Activity();
  plan_.source = Activity();
  plan_.slices.clear();
  plan_.input.forget();
  plan_.gradOutput.forget();
  plan_.scratchTensors.clear();
  for (const ModulePtr& r : replicas_) r->clearState();
}

void DataParallelTable::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  if (replicas_.empty()) return;
  replicas_[0]->apply(fn);
  markStale();
}

// Note [Moving a table]
// Module::to moves a whole tree by walking apply(), which reaches the first replica alone, so
// a table inside a moved tree would be left with its replicas apart and a communicator for
// devices they are no longer on. to() asks every module first (checkMovable), and the table
// refuses any device but its first replica's, before anything in the tree moves.
void DataParallelTable::checkMovable(const Device& device) const {
  NN_CHECK(replicas_.empty() || device == devices()[0],
           header() << ": cannot move to " << device.str() << "; its replicas stay on the devices given to add(), "
                    << "the first on " << devices()[0].str());
}

std::string DataParallelTable::header() const {
  std::string text = "nn.DataParallelTable(dim " + std::to_string(dim());
  for (const Device& d : devices()) text += ", " + d.str();
  return text + ")";
}

std::string DataParallelTable::toString() const {
  return replicas_.empty() ? header() : describeChildren(header(), "");
}

}  // namespace nn

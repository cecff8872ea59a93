// nn::DataParallelTable.
//
// Note [Data parallel steps]
// A forward is four named steps, each a function below:
//   sync     - if replicas are stale, the first replica's parameters (and buffers, by the
//              buffer policy) are broadcast to the others (syncParameters);
//   scatter  - the input is split along `dim`, sizes differing by at most one, the
//              remainder going to the first devices; each device thread copies its slice;
//   run      - each device thread runs its replica (one thread per device, DeviceThreads);
//   gather   - the outputs are concatenated along `dim` on the first device.
// backward scatters gradOutput the same way, gathers gradInput, and then reduces: the
// replicas' gradients are summed onto the first replica, so the first replica holds
// exactly the whole batch's gradient, also over several backward calls, and the
// optimizer works on the first replica's parameters alone.
//
// Note [Counted gradients]
// The gradients of the replicas other than the first are always counted: already summed
// into the first replica (after a reduce), or copies of its own (after add()). Each of them
// therefore zeroes its gradients on its own thread at the start of every accGradParameters,
// before it adds to them, and zeroGradParameters zeroes only the first replica. This saves a
// pass over the parameters and a round of the device threads in every step. Every replica
// takes part in the reduce, as NCCL requires: those that got no rows of a small batch add
// their zeros.
//
// Note [Stale replicas]
// Whether replica i must be refreshed before the next forward is the explicit flag
// stale_[i]. It is set by everything after which the first replica's parameters may
// change without this table seeing it: backward (an optimizer step follows),
// updateParameters, apply, and handing out writable parameters (parameters,
// getParameters, stateDict, which nn::loadStateInto writes through). forward syncs
// stale replicas and clears the flags. Writes through handles obtained before the last
// forward are not seen: call syncParameters() (or getParameters() again) after those.
//
// Note [Moving a table]
// Module::to moves a whole tree by walking apply(), which reaches the first replica alone, so
// a table inside a moved tree would be left with its replicas apart and a communicator for
// devices they are no longer on. to() asks every module first (checkMovable), and the table
// refuses any device but its first replica's, before anything in the tree moves.
#include "cunn/DataParallelTable.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "nn/Error.h"

namespace nn {

NN_REGISTER_MODULE(DataParallelTable);

namespace {

std::vector<Device> parseDevices(const std::string& text) {
  std::vector<Device> devices;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    devices.push_back(Device::parse(text.substr(start, end - start)));
    start = end + 1;
  }
  return devices;
}

// dst (resized on `device`) = src[..., start:start+length, ...] along dim; src contiguous.
void scatterSlice(const Tensor& src, Tensor& dst, int dim, int64_t start, int64_t length, const Device& device,
                  std::vector<int64_t>& sizes) {
  sizes = src.sizes();
  sizes[dim] = length;
  dst.resize_(sizes, device);
  copyAlong(dst, 0, src, start, dim, length);
}

// dst[..., start:start+part.size(dim), ...] = part.
void gatherSlice(const Tensor& part, Tensor& dst, int dim, int64_t start) {
  copyAlong(dst, start, part.contiguous(), 0, dim, part.size(dim));
}

}  // namespace

DataParallelTable::DataParallelTable(int dim, bool flattenParams, bool useNCCL)
    : dim_(dim), flattenParams_(flattenParams), useNCCL_(useNCCL) {
  NN_CHECK(dim >= 0, "nn.DataParallelTable: expected a dimension >= 0, got " << dim);
}

DataParallelTable::~DataParallelTable() = default;

ModulePtr DataParallelTable::create(const Config& c, std::vector<ModulePtr> children) {
  auto table = std::make_shared<DataParallelTable>(static_cast<int>(c.integer("dim")), c.flag("flattenParams"),
                                                   c.flag("useNCCL"));
  table->setBufferPolicy(c.integer("bufferPolicy") == 1 ? BufferPolicy::Average : BufferPolicy::BroadcastFirst);
  NN_CHECK(children.size() <= 1, "nn.DataParallelTable: expected at most one module, got " << children.size());
  if (!children.empty()) table->add(children[0], parseDevices(c.text("devices")));
  return table;
}

Config DataParallelTable::config() const {
  std::string devices;
  for (const Device& d : devices_) devices += (devices.empty() ? "" : ",") + d.str();
  return Config()
      .set("dim", dim_)
      .set("flattenParams", flattenParams_)
      .set("useNCCL", useNCCL_)
      .set("bufferPolicy", bufferPolicy_ == BufferPolicy::Average ? 1 : 0)
      .set("devices", devices);
}

DataParallelTable& DataParallelTable::add(ModulePtr module, const std::vector<Device>& devices) {
  NN_CHECK(replicas_.empty(), "nn.DataParallelTable.add: the table already holds a module on "
                                  << devices_.size() << " device(s); add is called once");
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
  tensors_.resize(replicas_.size());
  if (flattenParams_)
    for (size_t r = 0; r < replicas_.size(); ++r)
      std::tie(tensors_[r].flatValues, tensors_[r].flatGradients) = replicas_[r]->getParameters();
  devices_ = devices;
  stale_.assign(devices.size(), false);
  inputs_.resize(devices.size());
  gradOutputs_.resize(devices.size());
  sliceStart_.assign(devices.size(), 0);
  sliceLength_.assign(devices.size(), 0);
  sliceSizes_.resize(devices.size());
  threads_ = std::make_unique<DeviceThreads>(devices);
  DeviceThreads* threads = threads_.get();
  communicator_ = makeCommunicator(
      devices, useNCCL_, [threads](size_t count, FunctionRef<void(size_t)> task) { threads->run(count, task); });
  return *this;
}

DataParallelTable& DataParallelTable::threads(const std::function<void(const Device&)>& init) {
  checkReady();
  runReplicas(devices_.size(), [&](size_t i) { init(devices_[i]); });
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

bool DataParallelTable::isStale(size_t index) const {
  NN_CHECK(index < replicas_.size(),
           "nn.DataParallelTable.isStale: index " << index << " out of range for " << replicas_.size() << " replicas");
  return stale_[index];
}

std::string DataParallelTable::communicatorName() const { return communicator_ ? communicator_->name() : "none"; }

void DataParallelTable::markStale() {
  for (size_t i = 1; i < stale_.size(); ++i) stale_[i] = true;
}

void DataParallelTable::runReplicas(size_t count, FunctionRef<void(size_t)> task) {
  try {
    threads_->run(count, task);
  } catch (const Error& e) {
    throw Error(std::string("nn.DataParallelTable: replica ") + e.what());
  }
}

// --- sync ---------------------------------------------------------------------------

void DataParallelTable::refreshTensors(size_t count) {
  for (size_t r = 0; r < count; ++r) {
    ReplicaTensors& t = tensors_[r];
    t.values.clear();
    t.gradients.clear();
    t.buffers.clear();
    replicas_[r]->collectParameters(t.values, t.gradients);
    replicas_[r]->collectBuffers(t.buffers);
    // Someone may have flattened a replica's parameters again, into another buffer (an outer
    // module's getParameters()); then this call goes parameter by parameter.
    t.flat = flattenParams_ && isFlatView(t.values, t.flatValues) && isFlatView(t.gradients, t.flatGradients);
  }
}

template <typename Collective>
void DataParallelTable::forEachGroup(Kind kind, size_t count, Collective collective) {
  refreshTensors(count);
  group_.resize(count);
  bool flat = kind != Kind::Buffers;
  for (size_t r = 0; r < count; ++r) flat = flat && tensors_[r].flat;
  if (flat) {
    for (size_t r = 0; r < count; ++r)
      group_[r] = kind == Kind::Values ? tensors_[r].flatValues : tensors_[r].flatGradients;
    collective(group_);
    return;
  }
  auto list = [&](size_t r) -> const std::vector<Tensor>& {
    return kind == Kind::Values      ? tensors_[r].values
           : kind == Kind::Gradients ? tensors_[r].gradients
                                     : tensors_[r].buffers;
  };
  for (size_t k = 0; k < list(0).size(); ++k) {
    for (size_t r = 0; r < count; ++r) group_[r] = list(r)[k];
    collective(group_);
  }
}

void DataParallelTable::syncParameters() {
  checkReady();
  if (bufferPolicy_ == BufferPolicy::Average && buffersChanged_) averageBuffers();
  const size_t n = replicas_.size();
  auto broadcast = [&](const std::vector<Tensor>& g) { communicator_->broadcast(g); };
  forEachGroup(Kind::Values, n, broadcast);
  forEachGroup(Kind::Buffers, n, broadcast);
  for (size_t i = 1; i < n; ++i) {
    mirrorModes(*replicas_[0], *replicas_[i]);
    stale_[i] = false;
  }
  buffersChanged_ = false;
}

void DataParallelTable::averageBuffers() {
  const size_t n = replicas_.size();
  forEachGroup(Kind::Buffers, n, [&](const std::vector<Tensor>& g) {
    communicator_->allReduce(g);
    for (const Tensor& t : g) Tensor(t).mul_(1.0f / static_cast<float>(n));
  });
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

size_t DataParallelTable::activeDevices(int64_t batch) const {
  return static_cast<size_t>(std::min<int64_t>(batch, static_cast<int64_t>(replicas_.size())));
}

void DataParallelTable::split(int64_t batch, size_t active) {
  const int64_t base = batch / static_cast<int64_t>(active);
  const int64_t remainder = batch % static_cast<int64_t>(active);
  int64_t start = 0;
  for (size_t i = 0; i < active; ++i) {
    sliceStart_[i] = start;
    sliceLength_[i] = base + (static_cast<int64_t>(i) < remainder ? 1 : 0);
    start += sliceLength_[i];
  }
}

void DataParallelTable::gather(const std::vector<const Tensor*>& parts, Tensor& into, size_t active) {
  const Tensor& first = *parts[0];
  NN_CHECK(first.dim() > dim_, "nn.DataParallelTable: cannot gather along dimension " << dim_ << " outputs of size "
                                                                                      << first.shapeString());
  int64_t total = 0;
  for (size_t i = 0; i < active; ++i) {
    const Tensor& p = *parts[i];
    bool same = p.dim() == first.dim();
    for (int d = 0; same && d < p.dim(); ++d) same = d == dim_ || p.size(d) == first.size(d);
    NN_CHECK(same, "nn.DataParallelTable: replica on " << devices_[i].str() << " produced size " << p.shapeString()
                                                       << ", which does not match " << first.shapeString()
                                                       << " except along dimension " << dim_);
    total += p.size(dim_);
  }
  sizes_ = first.sizes();
  sizes_[dim_] = total;
  into.resize_(sizes_, devices_[0]);
  int64_t start = 0;
  for (size_t i = 0; i < active; ++i) {
    gatherSlice(*parts[i], into, dim_, start);
    start += parts[i]->size(dim_);
  }
}

const Tensor& DataParallelTable::updateOutput(const Tensor& input) {
  checkReady();
  NN_CHECK(input.dim() > dim_ && input.size(dim_) > 0,
           "nn.DataParallelTable: expected input with a non-empty dimension " << dim_ << " to split, got "
                                                                              << input.shapeString());
  for (size_t i = 1; i < stale_.size(); ++i)
    if (stale_[i]) {
      syncParameters();
      break;
    }
  const Tensor src = input.contiguous();
  active_ = activeDevices(src.size(dim_));
  split(src.size(dim_), active_);
  runReplicas(active_, [&](size_t i) {
    scatterSlice(src, inputs_[i], dim_, sliceStart_[i], sliceLength_[i], devices_[i], sliceSizes_[i]);
    replicas_[i]->forward(inputs_[i]);
  });
  if (train_) buffersChanged_ = true;
  parts_.clear();
  for (size_t i = 0; i < active_; ++i) parts_.push_back(&replicas_[i]->output);
  gather(parts_, output, active_);
  return output;
}

void DataParallelTable::checkGradOutput(const Tensor& gradOutput) const {
  NN_CHECK(active_ > 0, "nn.DataParallelTable: backward needs a forward first");
  NN_CHECK(gradOutput.sizes() == output.sizes(), "nn.DataParallelTable: expected gradOutput of size "
                                                     << output.shapeString() << ", got " << gradOutput.shapeString());
}

const Tensor& DataParallelTable::updateGradInput(const Tensor&, const Tensor& gradOutput) {
  checkReady();
  checkGradOutput(gradOutput);
  const Tensor g = gradOutput.contiguous();
  runReplicas(active_, [&](size_t i) {
    scatterSlice(g, gradOutputs_[i], dim_, sliceStart_[i], sliceLength_[i], devices_[i], sliceSizes_[i]);
    replicas_[i]->updateGradInputIfNeeded(inputs_[i], gradOutputs_[i]);
  });
  // A replica whose input needs no gradient (setGradInputNeeded(false) on it or on its
  // first layer) leaves its gradInput empty, and so does the table.
  if (replicas_[0]->gradInput.numel() == 0) {
    if (gradInput.numel() != 0) gradInput.set_(Tensor());
    return gradInput;
  }
  parts_.clear();
  for (size_t i = 0; i < active_; ++i) parts_.push_back(&replicas_[i]->gradInput);
  gather(parts_, gradInput, active_);
  return gradInput;
}

void DataParallelTable::accGradParameters(const Tensor&, const Tensor& gradOutput, float scale) {
  checkReady();
  checkGradOutput(gradOutput);
  const Tensor g = gradOutput.contiguous();
  markStale();
  runReplicas(replicas_.size(), [&](size_t i) {
    if (i > 0) replicas_[i]->zeroGradParameters();
    if (i >= active_) return;
    scatterSlice(g, gradOutputs_[i], dim_, sliceStart_[i], sliceLength_[i], devices_[i], sliceSizes_[i]);
    replicas_[i]->accGradParameters(inputs_[i], gradOutputs_[i], scale);
  });
  reduceGradients();
}

// --- reduce -------------------------------------------------------------------------

void DataParallelTable::reduceGradients() {
  if (replicas_.size() < 2) return;
  forEachGroup(Kind::Gradients, replicas_.size(), [&](const std::vector<Tensor>& g) { communicator_->reduce(g); });
}

// --- the rest of the module contract ------------------------------------------------

void DataParallelTable::zeroGradParameters() {
  checkReady();
  replicas_[0]->zeroGradParameters();  // the others' are counted: Note [Counted gradients]
}

void DataParallelTable::updateParameters(float learningRate) {
  checkReady();
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
  if (bufferPolicy_ == BufferPolicy::Average && buffersChanged_) averageBuffers();
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
  output.set_(Tensor());
  gradInput.set_(Tensor());
  for (Tensor& t : inputs_) t.set_(Tensor());
  for (Tensor& t : gradOutputs_) t.set_(Tensor());
  for (const ModulePtr& r : replicas_) r->clearState();
  active_ = 0;
}

void DataParallelTable::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  if (replicas_.empty()) return;
  replicas_[0]->apply(fn);
  markStale();
}

void DataParallelTable::checkMovable(const Device& device) const {
  NN_CHECK(replicas_.empty() || device == devices_[0], header() << ": cannot move to " << device.str()
                                                                << "; its replicas stay on the devices given to add(), "
                                                                << "the first on " << devices_[0].str());
}

std::string DataParallelTable::header() const {
  std::string text = "nn.DataParallelTable(dim " + std::to_string(dim_);
  for (const Device& d : devices_) text += ", " + d.str();
  return text + ")";
}

std::string DataParallelTable::toString() const {
  return replicas_.empty() ? header() : describeChildren(header(), "");
}

}  // namespace nn

// nn::Module: the parts of the contract that every module shares.
#include "nn/core/Module.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <ostream>

#include "nn/core/Container.h"
#include "nn/tensor/Random.h"

namespace nn {

void HookHandle::remove() {
  const std::shared_ptr<ModuleHooks> hooks = hooks_.lock();
  if (!hooks) return;
  auto drop = [this](auto& list) {
    list.erase(std::remove_if(list.begin(), list.end(), [this](const auto& entry) { return entry.first == id_; }),
               list.end());
  };
  drop(hooks->forwardPre);
  drop(hooks->forward);
  drop(hooks->backward);
  hooks_.reset();
}

namespace {

// Registers `hook` in `list` of `hooks` (made where null) and returns its handle's parts.
template <typename Hook>
uint64_t addHook(std::shared_ptr<ModuleHooks>& hooks, std::vector<std::pair<uint64_t, Hook>> ModuleHooks::*list,
                 Hook hook) {
  if (!hooks) hooks = std::make_shared<ModuleHooks>();
  const uint64_t id = hooks->nextId++;
  ((*hooks).*list).emplace_back(id, std::move(hook));
  return id;
}

}  // namespace

HookHandle Module::registerForwardPreHook(ForwardPreHook hook) {
  NN_CHECK(hook, typeName() << ": registerForwardPreHook: expected a function, got an empty one");
  const uint64_t id = addHook(hooks_, &ModuleHooks::forwardPre, std::move(hook));
  return HookHandle(hooks_, id);
}

HookHandle Module::registerForwardHook(ForwardHook hook) {
  NN_CHECK(hook, typeName() << ": registerForwardHook: expected a function, got an empty one");
  const uint64_t id = addHook(hooks_, &ModuleHooks::forward, std::move(hook));
  return HookHandle(hooks_, id);
}

HookHandle Module::registerBackwardHook(BackwardHook hook) {
  NN_CHECK(hook, typeName() << ": registerBackwardHook: expected a function, got an empty one");
  const uint64_t id = addHook(hooks_, &ModuleHooks::backward, std::move(hook));
  return HookHandle(hooks_, id);
}

// The hooks run from copies of their lists, so that a hook may remove itself or another.
const Tensor& Module::forwardHooked(const Tensor& input) {
  const Activity in(input);
  for (const auto& [id, hook] : std::vector<std::pair<uint64_t, ForwardPreHook>>(hooks_->forwardPre)) hook(*this, in);
  const Tensor& out = updateOutput(input);
  if (!hooks_->forward.empty()) {
    const Activity result(out);
    for (const auto& [id, hook] : std::vector<std::pair<uint64_t, ForwardHook>>(hooks_->forward))
      hook(*this, in, result);
  }
  return out;
}

const Activity& Module::forwardHooked(const Activity& input) {
  for (const auto& [id, hook] : std::vector<std::pair<uint64_t, ForwardPreHook>>(hooks_->forwardPre))
    hook(*this, input);
  const Activity& out = updateOutputActivity(input);
  for (const auto& [id, hook] : std::vector<std::pair<uint64_t, ForwardHook>>(hooks_->forward)) hook(*this, input, out);
  return out;
}

void Module::runBackwardHooks(const Activity& gradInput, const Activity& gradOutput) {
  if (!hooks_) return;
  for (const auto& [id, hook] : std::vector<std::pair<uint64_t, BackwardHook>>(hooks_->backward))
    hook(*this, gradInput, gradOutput);
}

const Tensor& Module::backwardPasses(const Tensor& input, const Tensor& gradOutput, float scale) {
  updateGradInputIfNeeded(input, gradOutput);
  accGradParameters(input, gradOutput, scale);
  return gradInput;
}

const Activity& Module::backwardPassesActivity(const Activity& input, const Activity& gradOutput, float scale) {
  updateGradInputIfNeeded(input, gradOutput);
  accGradParametersActivity(input, gradOutput, scale);
  return gradInputActivity_;
}

void Module::checkElementType(const Tensor& t, const char* what) const {
  NN_CHECK(takesElementType(t.dtype()),
           toString() << ": " << what << " is " << dtypeName(t.dtype()) << ", this module computes in float32");
}

const Tensor& Module::updateGradInputIfNeeded(const Tensor& input, const Tensor& gradOutput) {
  if (input.dtype() != DType::Float32) checkElementType(input, "input");
  if (gradOutput.dtype() != DType::Float32) checkElementType(gradOutput, "gradOutput");
  if (gradInputNeeded_ || !children().empty()) return updateGradInput(input, gradOutput);
  if (gradInput.numel() != 0) gradInput.set_(Tensor());
  return gradInput;
}

const Activity& Module::updateGradInputIfNeeded(const Activity& input, const Activity& gradOutput) {
  if (gradInputNeeded_ || !children().empty()) return updateGradInputActivity(input, gradOutput);
  if (gradInput.numel() != 0) gradInput.set_(Tensor());
  gradInputActivity_.shareTensor(gradInput);
  return gradInputActivity_;
}

void Module::accGradParameters(const Tensor&, const Tensor&, float) {}

const Activity& Module::updateOutputActivity(const Activity& input) {
  const Tensor& x = tensorInput(input, "input");
  if (x.dtype() != DType::Float32) checkElementType(x, "input");
  outputActivity_.shareTensor(updateOutput(x));
  return outputActivity_;
}

const Activity& Module::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  gradInputActivity_.shareTensor(updateGradInput(tensorInput(input, "input"), tensorInput(gradOutput, "gradOutput")));
  return gradInputActivity_;
}

void Module::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  accGradParameters(tensorInput(input, "input"), tensorInput(gradOutput, "gradOutput"), scale);
}

const Activity& Module::setOutput(const Activity& a) {
  if (&a != &outputActivity_) outputActivity_ = a;
  if (a.isTensor() && !a.tensor().is(output)) output.set_(a.tensor());
  return outputActivity_;
}

const Activity& Module::setGradInput(const Activity& a) {
  if (&a != &gradInputActivity_) gradInputActivity_ = a;
  if (a.isTensor() && !a.tensor().is(gradInput)) gradInput.set_(a.tensor());
  return gradInputActivity_;
}

const Tensor& Module::tensorInput(const Activity& input, const char* what) const {
  NN_CHECK(input.isTensor(), toString() << ": expected a tensor as " << what << ", got the table " << input.describe());
  return input.tensor();
}

const Table& Module::tableInput(const Activity& input, const char* what) const {
  NN_CHECK(input.isTable(),
           toString() << ": expected a table as " << what << ", got a tensor of size " << input.tensor().shapeString());
  return input.table();
}

void Module::checkAlike(const Activity& like, const Activity& got, const char* what) const {
  NN_CHECK(sameShape(like, got), toString()
                                     << ": expected " << what << " " << like.describe() << ", got " << got.describe());
}

const std::vector<ModulePtr>& Module::children() const {
  static const std::vector<ModulePtr> none;
  return none;
}

// Walks the tree rather than collecting parameters(), so that a training step allocates nothing.
void Module::zeroGradParameters() {
  for (Parameter& p : parameters_) p.gradient->zero_();
  for (const ModulePtr& child : children()) child->zeroGradParameters();
}

void Module::updateParameters(float learningRate) {
  auto [values, gradients] = parameters();
  dropRepeatedParameters(values, gradients);  // a module used twice steps once
  for (size_t i = 0; i < values.size(); ++i) values[i].add_(gradients[i], -learningRate);
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> Module::parameters() {
  std::pair<std::vector<Tensor>, std::vector<Tensor>> out;
  collectParameters(out.first, out.second);
  return out;
}

void Module::collectParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients) {
  for (const Parameter& p : parameters_) {
    values.push_back(*p.value);
    gradients.push_back(*p.gradient);
  }
  for (const ModulePtr& child : children()) child->collectParameters(values, gradients);
}

void Module::collectBuffers(std::vector<Tensor>& values) const {
  for (const Buffer& b : buffers_) values.push_back(*b.value);
  for (const ModulePtr& child : children()) child->collectBuffers(values);
}

bool isFlatView(const std::vector<Tensor>& tensors, const Tensor& flat) {
  if (!flat.storage()) return false;
  int64_t offset = flat.storageOffset();
  for (const Tensor& t : tensors) {
    if (t.storage() != flat.storage() || t.storageOffset() != offset || !t.isContiguous()) return false;
    offset += t.numel();
  }
  return offset == flat.storageOffset() + flat.numel();
}

void dropRepeatedParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients) {
  // A few dozen tensors: the quadratic search costs nothing.
  size_t kept = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    bool repeated = false;
    for (size_t j = 0; j < kept && !repeated; ++j) repeated = values[j].is(values[i]);
    if (repeated) continue;
    if (kept != i) {
      values[kept] = values[i];
      gradients[kept] = gradients[i];
    }
    ++kept;
  }
  values.resize(kept);
  gradients.resize(kept);
}

namespace {

// Copies every tensor into one new buffer and makes each a view into it.
Tensor flatten(std::vector<Tensor>& tensors, const Device& device) {
  int64_t total = 0;
  for (const Tensor& t : tensors) total += t.numel();
  Tensor flat = Tensor::empty({total}, device);
  int64_t offset = 0;
  for (Tensor& t : tensors) {
    const int64_t n = t.numel();
    flat.narrow(0, offset, n).copy_(t);
    const std::vector<int64_t> sizes = t.sizes();
    t.set_(flat.storage(), offset, sizes);
    offset += n;
  }
  return flat;
}

}  // namespace

std::pair<Tensor, Tensor> Module::getParameters() {
  auto [values, gradients] = parameters();
  dropRepeatedParameters(values, gradients);
  if (isFlatView(values, flatParameters_) && isFlatView(gradients, flatGradients_))
    return {flatParameters_, flatGradients_};
  const Device dev = values.empty() ? Device() : values[0].device();
  for (size_t i = 0; i < values.size(); ++i) {
    checkDevice(values[i], dev, "every parameter");
    checkDevice(gradients[i], dev, "every gradient");
  }
  flatParameters_ = flatten(values, dev);
  flatGradients_ = flatten(gradients, dev);
  return {flatParameters_, flatGradients_};
}

std::vector<Tensor> Module::buffers() {
  std::vector<Tensor> out;
  collectBuffers(out);
  return out;
}

std::vector<NamedTensor> Module::stateDict() {
  std::vector<NamedTensor> out;
  for (const Parameter& p : parameters_) out.push_back({p.name, *p.value});
  for (const Buffer& b : buffers_) out.push_back({b.name, *b.value});
  const std::vector<ModulePtr>& kids = children();
  for (size_t i = 0; i < kids.size(); ++i) {
    const std::string name = childName(i);
    for (NamedTensor& t : kids[i]->stateDict()) out.push_back({name.empty() ? t.name : name + "." + t.name, t.value});
  }
  return out;
}

// stateDict gives the names, parameters() the gradients; each stateDict entry is a handle of a
// parameter's tensor (Tensor::is), or of a buffer's. A few dozen tensors: the quadratic search
// costs nothing.
std::vector<NamedParameter> Module::namedParameters() {
  const auto [values, gradients] = parameters();
  std::vector<NamedParameter> out;
  for (NamedTensor& t : stateDict())
    for (size_t i = 0; i < values.size(); ++i)
      if (t.value.is(values[i])) {
        out.push_back({std::move(t.name), values[i], gradients[i]});
        break;
      }
  return out;
}

std::vector<NamedTensor> Module::namedBuffers() {
  const std::vector<Tensor> values = parameters().first;
  std::vector<NamedTensor> out;
  for (NamedTensor& t : stateDict())
    if (std::none_of(values.begin(), values.end(), [&](const Tensor& v) { return t.value.is(v); }))
      out.push_back(std::move(t));
  return out;
}

std::ostream& operator<<(std::ostream& out, const Module& module) { return out << module.toString(); }

void Module::training() {
  train_ = true;
  for (const ModulePtr& child : children()) child->training();
}

void Module::evaluate() {
  train_ = false;
  for (const ModulePtr& child : children()) child->evaluate();
}

ModulePtr Module::clone() const {
  // The constructors below draw initial values from the default generator, which the copied
  // state then replaces: the generator is put back, so that a program's random numbers do not
  // depend on how many copies it made (a DataParallelTable on two devices makes one).
  const std::mt19937 generator = defaultGenerator().engine();
  std::unordered_map<const Module*, ModulePtr> copies;
  ModulePtr copy = cloneTree(copies);
  defaultGenerator().engine() = generator;
  return copy;
}

ModulePtr Module::cloneTree(std::unordered_map<const Module*, ModulePtr>& copies) const {
  // A module already copied (used in two places) is that copy again.
  const auto copied = copies.find(this);
  if (copied != copies.end()) return copied->second;
  std::vector<ModulePtr> kids;
  for (const ModulePtr& child : children()) kids.push_back(child->cloneTree(copies));
  ModulePtr copy = createModule(typeName(), config(), std::move(kids));
  if (const auto* named = dynamic_cast<const Container*>(this))
    if (auto* into = dynamic_cast<Container*>(copy.get())) into->setChildNames(named->childNames());
  copy->copyLocalStateFrom(*this);
  copies.emplace(this, copy);
  return copy;
}

void Module::copyLocalStateFrom(const Module& other) {
  NN_CHECK(parameters_.size() == other.parameters_.size() && buffers_.size() == other.buffers_.size(),
           typeName() << ": clone produced a module with different parameters");
  for (size_t i = 0; i < parameters_.size(); ++i) {
    parameters_[i].value->set_(other.parameters_[i].value->clone());
    parameters_[i].gradient->set_(other.parameters_[i].gradient->clone());
  }
  for (size_t i = 0; i < buffers_.size(); ++i) buffers_[i].value->set_(other.buffers_[i].value->clone());
  train_ = other.train_;
  gradInputNeeded_ = other.gradInputNeeded_;
}

void Module::clearResults() {
  output.set_(Tensor());
  gradInput.set_(Tensor());
  outputActivity_ = output;
  gradInputActivity_ = gradInput;
}

void Module::clearState() {
  clearResults();
  for (const ModulePtr& child : children()) child->clearState();
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (const ModulePtr& child : children()) child->apply(fn);
}

std::vector<ModulePtr> Module::listModules() {
  std::weak_ptr<Module> self = weak_from_this();
  NN_CHECK(!self.expired(), typeName() << ": listModules needs a module held by a std::shared_ptr");
  std::vector<ModulePtr> out{self.lock()};
  for (const ModulePtr& child : children()) {
    std::vector<ModulePtr> below = child->listModules();
    out.insert(out.end(), below.begin(), below.end());
  }
  return out;
}

std::vector<Tensor*> Module::localTensors() {
  std::vector<Tensor*> out;
  for (Parameter& p : parameters_) {
    out.push_back(p.value);
    out.push_back(p.gradient);
  }
  for (Buffer& b : buffers_) out.push_back(b.value);
  out.push_back(&flatParameters_);
  out.push_back(&flatGradients_);
  return out;
}

void Module::to(const Device& device) {
  checkDeviceExists(device);
  std::vector<Tensor*> tensors;
  std::vector<Module*> modules;
  apply([&](Module& m) {
    modules.push_back(&m);
    for (Tensor* t : m.localTensors()) tensors.push_back(t);
  });
  for (const Module* m : modules) m->checkMovable(device);
  // One new storage per old storage, so views that shared memory still share it.
  std::map<Storage*, std::shared_ptr<Storage>> moved;
  for (Tensor* t : tensors) {
    if (!t->storage() || t->device() == device) continue;
    std::shared_ptr<Storage>& target = moved[t->storage().get()];
    if (!target) {
      Tensor whole;
      whole.set_(t->storage(), 0, {t->storage()->count()});
      Tensor copy = whole.to(device);
      target = copy.storage();
    }
    NN_CHECK(t->isContiguous(), typeName() << ": cannot move a non-contiguous parameter to " << device.str());
    const std::vector<int64_t> sizes = t->sizes();
    t->set_(target, t->storageOffset(), sizes);
  }
  for (Module* m : modules) m->clearState();
}

void Module::checkMovable(const Device&) const {}

Device Module::device() {
  for (const Parameter& p : parameters_)
    if (p.value->storage()) return p.value->device();
  for (const Buffer& b : buffers_)
    if (b.value->storage()) return b.value->device();
  for (const ModulePtr& child : children())
    if (!child->stateDictIsEmpty()) return child->device();
  return Device();
}

bool Module::stateDictIsEmpty() const {
  if (!parameters_.empty() || !buffers_.empty()) return false;
  for (const ModulePtr& child : children())
    if (!child->stateDictIsEmpty()) return false;
  return true;
}

void Module::registerParameter(const std::string& name, Tensor* value, Tensor* gradient) {
  parameters_.push_back({name, value, gradient});
}

void Module::registerBuffer(const std::string& name, Tensor* value) { buffers_.push_back({name, value}); }

void Module::checkDevice(const Tensor& t, const Device& expected, const char* what) const {
  NN_CHECK(t.device() == expected,
           toString() << ": expected " << what << " on " << expected.str() << ", got " << t.device().str());
}

void Module::checkGradOutput(const Tensor& like, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == like.sizes(), toString() << ": expected gradOutput of size " << like.shapeString()
                                                          << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == like.device(),
           toString() << ": expected gradOutput on " << like.device().str() << ", got " << gradOutput.device().str());
}

void Module::checkGradOutput(const Tensor& input, const std::vector<int64_t>& sizes, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == sizes && gradOutput.device() == input.device(),
           toString() << ": expected gradOutput of size " << shapeString(sizes) << " on " << input.device().str()
                      << " for input " << input.shapeString() << ", got " << gradOutput.shapeString() << " on "
                      << gradOutput.device().str());
}

namespace {
std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, ModuleFactory>& registry() {
  static std::map<std::string, ModuleFactory> r;
  return r;
}
}  // namespace

void registerModuleType(const std::string& typeName, ModuleFactory factory) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[typeName] = std::move(factory);
}

std::vector<std::string> registeredModuleTypes() {
  std::lock_guard<std::mutex> lock(registryMutex());
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

ModulePtr createModule(const std::string& typeName, const Config& config, std::vector<ModulePtr> children) {
  ModuleFactory factory;
  {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto it = registry().find(typeName);
    NN_CHECK(it != registry().end(),
             "createModule: unknown module type '"
                 << typeName << "'; register it in the .cpp file that defines it, with NN_REGISTER_MODULE_AS(Type, \""
                 << typeName << "\") (nn/core/Options.h), and link that file into the program");
    factory = it->second;
  }
  return factory(config, std::move(children));
}

}  // namespace nn

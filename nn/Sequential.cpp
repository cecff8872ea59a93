// nn::Sequential.
#include "nn/Sequential.h"

#include <optional>

#include "nn/BatchNormalization.h"
#include "nn/Options.h"
#include "nn/ReLU.h"

namespace nn {

namespace {

// A batch normalisation and the in-place ReLU after it, set to run as one for the passes in
// this guard's scope (Note [Batch normalisation, then ReLU], nn/math/BatchNorm.h): the first
// writes the ReLU's output and takes the ReLU's gradOutput back through it, the ReLU passes
// both through without touching memory.
class ReLUTaken {
 public:
  ReLUTaken(BatchNormalization* bn, Module& relu) : bn_(bn), relu_(static_cast<ReLU&>(relu)) {
    bn_->setReLUAfter(true);
    relu_.setAppliedBefore(true);
  }
  ~ReLUTaken() {
    bn_->setReLUAfter(false);
    relu_.setAppliedBefore(false);
  }
  ReLUTaken(const ReLUTaken&) = delete;
  ReLUTaken& operator=(const ReLUTaken&) = delete;

 private:
  BatchNormalization* bn_;
  ReLU& relu_;
};

}  // namespace

NN_REGISTER_MODULE(Sequential);

Sequential::Sequential(const std::vector<ModulePtr>& modules) {
  for (const ModulePtr& m : modules) add(m);
}

ModulePtr Sequential::create(const Config&, std::vector<ModulePtr> children) {
  return std::make_shared<Sequential>(children);
}

void Sequential::insert(ModulePtr module, size_t index) {
  checkNewChild(module.get(), "insert");
  NN_CHECK(index <= modules_.size(),
           "nn.Sequential.insert: index " << index << " out of range [0, " << modules_.size() << "]");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
}

void Sequential::remove(size_t index) {
  NN_CHECK(index < modules_.size(),
           "nn.Sequential.remove: index " << index << " out of range for " << modules_.size() << " modules");
  modules_.erase(modules_.begin() + static_cast<std::ptrdiff_t>(index));
}

BatchNormalization* Sequential::reluAfter(size_t i) const {
  if (i + 1 >= modules_.size()) return nullptr;
  const auto* relu = dynamic_cast<const ReLU*>(modules_[i + 1].get());
  if (relu == nullptr || !relu->inplace()) return nullptr;
  return dynamic_cast<BatchNormalization*>(modules_[i].get());
}

const Activity& Sequential::updateOutputActivity(const Activity& input) {
  checkNotEmpty();
  const Activity* current = &input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (BatchNormalization* bn = reluAfter(i)) {
      ReLUTaken pair(bn, *modules_[i + 1]);
      current = &childUpdateOutput(i, *current);
      current = &childUpdateOutput(++i, *current);
      continue;
    }
    current = &childUpdateOutput(i, *current);
  }
  return setOutput(*current);
}

void Sequential::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  // Module i + 1's gradInput serves module i's backward alone: module i's own gradInput and its
  // parameters' gradients. A module without parameters or buffers (View, ReLU, Dropout) whose
  // gradInput is not needed needs no gradOutput, so the setting goes on to the module above it,
  // up to the first that has parameters: behind a leading View, the first Linear computes no
  // gradInput either.
  for (const ModulePtr& m : modules_) {
    m->setGradInputNeeded(needed);
    if (!m->stateDictIsEmpty()) break;
  }
}

size_t Sequential::lowestInBackward() const {
  // The topmost module that computes no gradInput: those under it get no gradOutput, so none of
  // them may need one.
  size_t lowest = 0;
  for (size_t i = modules_.size(); i-- > 1;)
    if (!modules_[i]->gradInputNeeded()) {
      lowest = i;
      break;
    }
  for (size_t j = lowest; j-- > 0;)
    NN_CHECK(!modules_[j]->gradInputNeeded() && modules_[j]->stateDictIsEmpty(),
             typeName() << ": module (" << lowest + 1 << ") " << modules_[lowest]->typeName()
                        << " computes no gradInput (setGradInputNeeded(false)), but module (" << j + 1
                        << ") below it needs one; only modules under which nothing needs a gradient may go without");
  return lowest;
}

const Activity& Sequential::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  checkNotEmpty();
  const size_t lowest = lowestInBackward();
  const Activity* current = &gradOutput;
  const auto below = [&](size_t i) -> const Activity& { return i == 0 ? input : modules_[i - 1]->outputActivity(); };
  for (size_t i = modules_.size(); i-- > lowest;) {
    if (BatchNormalization* bn = i > lowest ? reluAfter(i - 1) : nullptr) {
      ReLUTaken pair(bn, *modules_[i]);
      current = &childUpdateGradInput(i, below(i), *current);
      --i;
      current = &childUpdateGradInput(i, below(i), *current);
      continue;
    }
    current = &childUpdateGradInput(i, below(i), *current);
  }
  return setGradInput(*current);
}

void Sequential::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  checkNotEmpty();
  const size_t lowest = lowestInBackward();  // the modules under it have no parameters
  const Activity* current = &gradOutput;
  for (size_t i = modules_.size(); i-- > lowest;) {
    const Activity& below = i == 0 ? input : modules_[i - 1]->outputActivity();
    // Where a ReLU follows, its gradOutput is the ReLU's gradInput, which passed the ReLU's
    // gradOutput through.
    std::optional<ReLUTaken> pair;
    if (BatchNormalization* bn = reluAfter(i)) pair.emplace(bn, *modules_[i + 1]);
    childAccGradParameters(i, below, *current, scale);
    current = &modules_[i]->gradInputActivity();
  }
}

std::string Sequential::toString() const {
  std::string flow = "[input";
  for (size_t i = 0; i < modules_.size(); ++i) flow += " -> (" + std::to_string(i + 1) + ")";
  return describeChildren(typeName(), flow + " -> output]");
}

}  // namespace nn

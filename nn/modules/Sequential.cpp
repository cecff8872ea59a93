// nn::Sequential.
#include "nn/modules/Sequential.h"

#include <optional>

#include "nn/core/Options.h"

namespace nn {

namespace {

// Module i taking module i + 1's passes into its own for the passes in this guard's scope
// (Module::takeNext): the first applies the second's formula where it writes its output and
// takes the second's gradOutput back through it, the second passes both through.
class NextTaken {
 public:
  NextTaken(Module& module, Module& next) : module_(module), next_(next) { module_.takeNext(next_, true); }
  ~NextTaken() { module_.takeNext(next_, false); }
  NextTaken(const NextTaken&) = delete;
  NextTaken& operator=(const NextTaken&) = delete;

 private:
  Module& module_;
  Module& next_;
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
  if (!names_.empty()) names_.insert(names_.begin() + static_cast<std::ptrdiff_t>(index), std::nullopt);
}

void Sequential::remove(size_t index) {
  NN_CHECK(index < modules_.size(),
           "nn.Sequential.remove: index " << index << " out of range for " << modules_.size() << " modules");
  modules_.erase(modules_.begin() + static_cast<std::ptrdiff_t>(index));
  if (!names_.empty()) names_.erase(names_.begin() + static_cast<std::ptrdiff_t>(index));
}

bool Sequential::takesNext(size_t i) const {
  return i + 1 < modules_.size() && modules_[i]->canTakeNext(*modules_[i + 1]);
}

const Activity& Sequential::updateOutputActivity(const Activity& input) {
  checkNotEmpty();
  const Activity* current = &input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (takesNext(i)) {
      NextTaken pair(*modules_[i], *modules_[i + 1]);
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
    if (i > lowest && takesNext(i - 1)) {
      NextTaken pair(*modules_[i - 1], *modules_[i]);
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
    // Where module i takes the next one's passes, its gradOutput is the next one's gradInput,
    // which passed that one's gradOutput through.
    std::optional<NextTaken> pair;
    if (takesNext(i)) pair.emplace(*modules_[i], *modules_[i + 1]);
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

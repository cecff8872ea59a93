// nn::Sequential.
#include "nn/Sequential.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(Sequential);

ModulePtr Sequential::create(const Config&, std::vector<ModulePtr> children) {
  auto s = std::make_shared<Sequential>();
  for (ModulePtr& c : children) s->add(std::move(c));
  return s;
}

void Sequential::insert(ModulePtr module, size_t index) {
  NN_CHECK(module != nullptr, "nn.Sequential.insert: expected a module, got nullptr");
  NN_CHECK(index <= modules_.size(),
           "nn.Sequential.insert: index " << index << " out of range [0, " << modules_.size() << "]");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
}

void Sequential::remove(size_t index) {
  NN_CHECK(index < modules_.size(),
           "nn.Sequential.remove: index " << index << " out of range for " << modules_.size() << " modules");
  modules_.erase(modules_.begin() + static_cast<std::ptrdiff_t>(index));
}

const Activity& Sequential::updateOutputActivity(const Activity& input) {
  checkNotEmpty();
  const Activity* current = &input;
  for (size_t i = 0; i < modules_.size(); ++i) current = &childUpdateOutput(i, *current);
  return setOutput(*current);
}

void Sequential::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  if (!modules_.empty()) modules_[0]->setGradInputNeeded(needed);
}

const Activity& Sequential::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  checkNotEmpty();
  for (size_t i = 1; i < modules_.size(); ++i)
    NN_CHECK(modules_[i]->gradInputNeeded(), typeName()
                                                 << ": module (" << i + 1 << ") " << modules_[i]->typeName()
                                                 << " computes no gradInput (setGradInputNeeded(false)), but module ("
                                                 << i << ") below it needs one; only the first module may go without");
  const Activity* current = &gradOutput;
  for (size_t i = modules_.size(); i-- > 0;) {
    const Activity& below = i == 0 ? input : modules_[i - 1]->outputActivity();
    current = &childUpdateGradInput(i, below, *current);
  }
  return setGradInput(*current);
}

void Sequential::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  checkNotEmpty();
  const Activity* current = &gradOutput;
  for (size_t i = modules_.size(); i-- > 0;) {
    const Activity& below = i == 0 ? input : modules_[i - 1]->outputActivity();
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

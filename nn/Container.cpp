// nn::Container: child bookkeeping shared by Sequential, Concat and DataParallelTable.
#include "nn/Container.h"

#include "nn/Numerics.h"
#include "nn/Profiler.h"

namespace nn {

Container& Container::add(ModulePtr module) {
  NN_CHECK(module != nullptr, typeName() << ".add: expected a module, got nullptr");
  modules_.push_back(std::move(module));
  return *this;
}

ModulePtr Container::get(size_t index) const {
  NN_CHECK(index < modules_.size(), typeName() << ".get: index " << index << " out of range for " << modules_.size()
                                               << " modules (indices count from 0)");
  return modules_[index];
}

// The timers end before the numerics checks, which are no part of the module's time.
const Tensor& Container::childUpdateOutput(size_t i, const Tensor& input) {
  return inChild(i, [&]() -> const Tensor& {
    const Tensor* out;
    {
      ScopedTimer timer(modules_[i]->profile.forward);
      out = &modules_[i]->updateOutput(input);
    }
    if (checkNumericsEnabled()) checkFinite(*out, *modules_[i], "forward", "its output");
    return *out;
  });
}

const Tensor& Container::childUpdateGradInput(size_t i, const Tensor& input, const Tensor& gradOutput) {
  return inChild(i, [&]() -> const Tensor& {
    const Tensor* g;
    {
      ScopedTimer timer(modules_[i]->profile.gradInput);
      g = &modules_[i]->updateGradInputIfNeeded(input, gradOutput);
    }
    if (checkNumericsEnabled()) checkFinite(*g, *modules_[i], "backward", "its gradInput");
    return *g;
  });
}

void Container::childAccGradParameters(size_t i, const Tensor& input, const Tensor& gradOutput, float scale) {
  inChild(i, [&] {
    {
      ScopedTimer timer(modules_[i]->profile.gradParameters);
      modules_[i]->accGradParameters(input, gradOutput, scale);
    }
    if (checkNumericsEnabled()) checkFiniteGradients(*modules_[i]);
  });
}

void Container::checkNotEmpty() const {
  NN_CHECK(!modules_.empty(), typeName() << ": expected at least one module, got an empty container");
}

std::string Container::describeChildren(const std::string& header, const std::string& flow) const {
  std::string s = header + " {\n";
  if (!flow.empty()) s += "  " + flow + "\n";
  for (size_t i = 0; i < modules_.size(); ++i) {
    std::string child = modules_[i]->toString();
    for (size_t pos = child.find('\n'); pos != std::string::npos; pos = child.find('\n', pos + 1))
      child.insert(pos + 1, "  ");
    s += "  (" + std::to_string(i + 1) + "): " + child + "\n";
  }
  return s + "}";
}

}  // namespace nn

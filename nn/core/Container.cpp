// nn::Container: child bookkeeping shared by Sequential, Concat and DataParallelTable.
#include "nn/core/Container.h"

#include <set>
#include <unordered_set>

#include "nn/core/GradientObserver.h"
#include "nn/core/Numerics.h"
#include "nn/core/Profiler.h"

namespace nn {

namespace {

// Whether `target` is `root` or lies anywhere below it; each module looked at once, however many
// places it takes (modules shared at every level would make a walk of the places exponential).
bool holds(const Module& root, const Module* target, std::unordered_set<const Module*>& seen) {
  if (&root == target) return true;
  if (!seen.insert(&root).second) return false;
  for (const ModulePtr& child : root.children())
    if (holds(*child, target, seen)) return true;
  return false;
}

bool holds(const Module& root, const Module* target) {
  std::unordered_set<const Module*> seen;
  return holds(root, target, seen);
}

}  // namespace

void Container::checkNewChild(const Module* module, const char* call) const {
  NN_CHECK(module != nullptr, typeName() << "." << call << ": expected a module, got nullptr");
  NN_CHECK(!holds(*module, this), typeName() << "." << call << ": the " << module->typeName() << " to add is this "
                                             << typeName() << " or holds it; a container inside itself has no end");
}

Container& Container::add(ModulePtr module) {
  checkNewChild(module.get(), "add");
  modules_.push_back(std::move(module));
  if (!names_.empty()) names_.emplace_back();
  return *this;
}

Container& Container::add(const std::string& name, ModulePtr module) {
  checkNewChild(module.get(), "add");
  std::vector<std::optional<std::string>> names = names_;
  names.resize(modules_.size());
  names.emplace_back(name);
  modules_.push_back(std::move(module));
  try {
    checkNames(names, typeName() + ".add");
  } catch (...) {
    modules_.pop_back();
    throw;
  }
  names_ = std::move(names);
  return *this;
}

ModulePtr Container::get(size_t index) const {
  NN_CHECK(index < modules_.size(), typeName() << ".get: index " << index << " out of range for " << modules_.size()
                                               << " modules (indices count from 0)");
  return modules_[index];
}

ModulePtr Container::get(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] && *names_[i] == name) return modules_[i];
  throw Error(typeName() + ".get: no child is named '" + name + "'");
}

std::string Container::childName(size_t index) const {
  return index < names_.size() && names_[index] ? *names_[index] : std::to_string(index);
}

void Container::setChildNames(const std::vector<std::optional<std::string>>& names, const std::string& source) {
  const std::string who = source.empty() ? typeName() : source;
  NN_CHECK(names.empty() || names.size() == modules_.size(),
           who << ": expected a name for each of the " << modules_.size() << " children, got " << names.size());
  checkNames(names, who);
  names_ = names;
}

void Container::checkNames(const std::vector<std::optional<std::string>>& names, const std::string& source) const {
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i]) {
      const std::string& name = *names[i];
      NN_CHECK(name.find('.') == std::string::npos,
               source << ": child " << i << "'s name '" << name << "' has a '.', which separates the parts of names");
    }
    const std::string effective = names[i] ? *names[i] : std::to_string(i);
    if (effective.empty()) continue;  // lifted names: the child's own
    NN_CHECK(seen.insert(effective).second,
             source << ": two children are named '" << effective << "' (a name may not be another child's index)");
  }
}

namespace {

void runAccGradParameters(Module& m, const Tensor& input, const Tensor& gradOutput, float scale) {
  m.accGradParameters(input, gradOutput, scale);
}
void runAccGradParameters(Module& m, const Activity& input, const Activity& gradOutput, float scale) {
  m.accGradParametersActivity(input, gradOutput, scale);
}

}  // namespace

// The timers end before the numerics checks, which are no part of the module's time.
template <typename T>
const T& Container::childUpdateOutput(size_t i, const T& input) {
  return inChild(i, [&]() -> const T& {
    const T* out;
    {
      ScopedTimer timer(modules_[i]->profile.forward);
      out = &modules_[i]->forward(input);  // updateOutput, between the child's forward hooks
    }
    if (checkNumericsEnabled()) checkFinite(*out, *modules_[i], "forward", "its output");
    return *out;
  });
}

template <typename T>
const T& Container::childUpdateGradInput(size_t i, const T& input, const T& gradOutput) {
  return inChild(i, [&]() -> const T& {
    const T* g;
    {
      ScopedTimer timer(modules_[i]->profile.gradInput);
      g = &modules_[i]->updateGradInputIfNeeded(input, gradOutput);
    }
    if (modules_[i]->hasHooks()) modules_[i]->runBackwardHooks(Activity(*g), Activity(gradOutput));
    if (checkNumericsEnabled()) checkFinite(*g, *modules_[i], "backward", "its gradInput");
    return *g;
  });
}

template <typename T>
void Container::childAccGradParameters(size_t i, const T& input, const T& gradOutput, float scale) {
  inChild(i, [&] {
    {
      ScopedTimer timer(modules_[i]->profile.gradParameters);
      runAccGradParameters(*modules_[i], input, gradOutput, scale);
    }
    if (checkNumericsEnabled()) checkFiniteGradients(*modules_[i]);
    notifyGradientsDone(*modules_[i]);
  });
}

template const Tensor& Container::childUpdateOutput(size_t, const Tensor&);
template const Activity& Container::childUpdateOutput(size_t, const Activity&);
template const Tensor& Container::childUpdateGradInput(size_t, const Tensor&, const Tensor&);
template const Activity& Container::childUpdateGradInput(size_t, const Activity&, const Activity&);
template void Container::childAccGradParameters(size_t, const Tensor&, const Tensor&, float);
template void Container::childAccGradParameters(size_t, const Activity&, const Activity&, float);

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
    const bool named = i < names_.size() && names_[i] && !names_[i]->empty();
    s += "  (" + (named ? *names_[i] : std::to_string(i + 1)) + "): " + child + "\n";
  }
  return s + "}";
}

std::string Container::describeBranches(const std::string& header) const {
  std::string s = header + " {\n  input";
  for (size_t i = 0; i < modules_.size(); ++i) {
    const bool last = i + 1 == modules_.size();
    // A child's own lines continue its branch, or hang below the last one.
    const std::string indent = last ? "\n         " : "\n    |    ";
    std::string child = modules_[i]->toString();
    for (size_t pos = child.find('\n'); pos != std::string::npos; pos = child.find('\n', pos + indent.size()))
      child.replace(pos, 1, indent);
    const bool named = i < names_.size() && names_[i] && !names_[i]->empty();
    s += (last ? "\n     `-> (" : "\n    |`-> (") + (named ? *names_[i] : std::to_string(i + 1)) + "): " + child;
  }
  return s + "\n     ... -> output\n}";
}

}  // namespace nn

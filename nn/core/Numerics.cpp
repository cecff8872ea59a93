// Numerics checks.
#include "nn/core/Numerics.h"

#include <atomic>
#include <cmath>

#include "nn/core/Module.h"

namespace nn {

namespace {
std::atomic<bool> gCheckNumerics{false};
}  // namespace

void setCheckNumerics(bool on) { gCheckNumerics = on; }
bool checkNumericsEnabled() { return gCheckNumerics.load(std::memory_order_relaxed); }

void checkFinite(const Tensor& t, const Module& module, const char* pass, const char* what) {
  const Tensor host = t.device().isCpu() ? t.contiguous() : t.to(Device());
  const float* p = host.data();
  for (int64_t i = 0, n = host.numel(); i < n; ++i) {
    if (std::isfinite(p[i])) continue;
    throw Error(module.toString() + ": " + pass + " produced " + (std::isnan(p[i]) ? "NaN" : "Inf") +
                " at element " + std::to_string(i) + " of " + what + " " + t.shapeString());
  }
}

void checkFinite(const Activity& a, const Module& module, const char* pass, const char* what) {
  if (a.isTensor()) return checkFinite(a.tensor(), module, pass, what);
  for (const Activity& item : a.table()) checkFinite(item, module, pass, what);
}

void checkFiniteGradients(Module& module) {
  if (!module.children().empty()) return;  // a container's children were checked in its own pass
  auto [values, gradients] = module.parameters();
  for (const Tensor& g : gradients) checkFinite(g, module, "accGradParameters", "a parameter gradient");
}

}  // namespace nn

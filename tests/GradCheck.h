// Test support: finite-difference gradient checks and small tensor helpers.
//
// The checks compare the analytic gradient of f = sum(module(input) * w), for a fixed
// random w, with central differences (f(x + h) - f(x - h)) / 2h, element by element, and
// return the worst error |analytic - numeric| / max(1, |numeric|).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/Criterion.h"
#include "nn/Module.h"

namespace nn::test {

struct GradCheckOptions {
  float step = 1e-2f;
  uint64_t seed = 1;
};

/// Worst error of dLoss/dInput.
double inputGradientError(Module& module, const Tensor& input, const GradCheckOptions& options = {});
/// Worst error of dLoss/dParameter for each parameter, in parameters() order.
std::vector<double> parameterGradientErrors(Module& module, const Tensor& input, const GradCheckOptions& options = {});
/// Worst error of dLoss/dInput for a criterion.
double criterionGradientError(Criterion& criterion, const Tensor& input, const Tensor& target,
                              const GradCheckOptions& options = {});

/// Uniform values in [low, high) from a fixed seed.
Tensor randomTensor(const std::vector<int64_t>& sizes, uint64_t seed, float low = -1.f, float high = 1.f);
/// Largest |a[i] - b[i]|; infinite if the sizes differ.
double maxAbsDiff(const Tensor& a, const std::vector<float>& b);
double maxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace nn::test

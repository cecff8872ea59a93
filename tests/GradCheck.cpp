// Test support: finite-difference gradient checks.
#include "tests/GradCheck.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/Random.h"

namespace nn::test {

namespace {

double dot(const Tensor& a, const Tensor& w) {
  const std::vector<float> x = a.toVector();
  const std::vector<float> y = w.toVector();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * y[i];
  return s;
}

double relativeError(double analytic, double numeric) {
  return std::fabs(analytic - numeric) / std::max(1.0, std::fabs(numeric));
}

// Worst error over the elements of `x` (a CPU tensor that f reads), where `analytic`
// holds df/dx as computed by the code under test.
template <typename F>
double compare(Tensor x, const Tensor& analytic, F f, float step) {
  const std::vector<float> a = analytic.toVector();
  if (static_cast<int64_t>(a.size()) != x.numel()) return std::numeric_limits<double>::infinity();
  Tensor flat = x.contiguous();
  const bool copied = !flat.is(x) && flat.storage() != x.storage();
  double worst = 0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    float& v = flat.data()[i];
    const float saved = v;
    v = saved + step;
    if (copied) x.copy_(flat);
    const double plus = f();
    v = saved - step;
    if (copied) x.copy_(flat);
    const double minus = f();
    v = saved;
    if (copied) x.copy_(flat);
    worst = std::max(worst, relativeError(a[i], (plus - minus) / (2.0 * step)));
  }
  return worst;
}

}  // namespace

Tensor randomTensor(const std::vector<int64_t>& sizes, uint64_t seed, float low, float high) {
  Generator g(seed);
  Tensor t = Tensor::empty(sizes);
  t.uniform_(g, low, high);
  return t;
}

double inputGradientError(Module& module, const Tensor& input, const GradCheckOptions& options) {
  Tensor x = input.clone();
  const Tensor& out = module.forward(x);
  const Tensor w = randomTensor(out.sizes(), options.seed);
  const Tensor analytic = module.updateGradInput(x, w).clone();
  return compare(
      x, analytic, [&] { return dot(module.forward(x), w); }, options.step);
}

std::vector<double> parameterGradientErrors(Module& module, const Tensor& input, const GradCheckOptions& options) {
  Tensor x = input.clone();
  const Tensor& out = module.forward(x);
  const Tensor w = randomTensor(out.sizes(), options.seed);
  module.zeroGradParameters();
  module.backward(x, w);
  auto [values, gradients] = module.parameters();
  std::vector<double> errors;
  for (size_t p = 0; p < values.size(); ++p) {
    const Tensor analytic = gradients[p].clone();
    errors.push_back(compare(
        values[p], analytic, [&] { return dot(module.forward(x), w); }, options.step));
  }
  return errors;
}

double criterionGradientError(Criterion& criterion, const Tensor& input, const Tensor& target,
                              const GradCheckOptions& options) {
  Tensor x = input.clone();
  criterion.forward(x, target);
  const Tensor analytic = criterion.backward(x, target).clone();
  return compare(
      x, analytic, [&] { return static_cast<double>(criterion.forward(x, target)); }, options.step);
}

double maxAbsDiff(const Tensor& a, const std::vector<float>& b) {
  const std::vector<float> x = a.toVector();
  if (x.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(static_cast<double>(x[i]) - b[i]));
  }
  return worst;
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return std::numeric_limits<double>::infinity();
  return maxAbsDiff(a, b.toVector());
}

}  // namespace nn::test

// Test support: finite-difference gradient checks.
#include "tests/support/GradCheck.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "nn/tensor/Random.h"

namespace nn::test {

namespace {

// sum(a * w) in double; `a` on any device, `w` its values in row-major order.
double dot(const Tensor& a, const std::vector<float>& w) {
  const std::vector<float> x = a.toVector();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * w[i];
  return s;
}

double relativeError(double analytic, double numeric) {
  return std::fabs(analytic - numeric) / std::max(1.0, std::fabs(numeric));
}

// Compares `analytic`, df/dx in row-major order as computed by the code under test, with
// central differences of f over the elements of `x` (a tensor on any device, of any strides,
// that f reads). Each element is perturbed in a host copy of x, which is then copied into x,
// so that f sees the perturbation wherever x lives; x holds its own values again at the end.
template <typename F>
GradientCheck compare(Tensor x, const std::vector<float>& analytic, F f, float step) {
  if (static_cast<int64_t>(analytic.size()) != x.numel()) return {std::numeric_limits<double>::infinity(), 0};
  Tensor host = Tensor::fromVector(x.sizes(), x.toVector());
  GradientCheck check{0, 0};
  for (int64_t i = 0; i < host.numel(); ++i) {
    float& v = host.data()[i];
    const float saved = v;
    v = saved + step;
    x.copy_(host);
    const double plus = f();
    v = saved - step;
    x.copy_(host);
    const double minus = f();
    v = saved;
    x.copy_(host);
    const double numeric = (plus - minus) / (2.0 * step);
    check.error = std::max(check.error, relativeError(analytic[i], numeric));
    check.largest = std::max(check.largest, std::fabs(numeric));
  }
  return check;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const GradientCheck& check) {
  return os << "{worst error " << check.error << ", largest numeric derivative " << check.largest << "}";
}

bool AgreesWithin::match(const GradientCheck& check) const {
  return check.error < tolerance_ && check.largest >= kNontrivial * tolerance_;
}

std::string AgreesWithin::describe() const {
  std::ostringstream os;
  os << "agrees with finite differences within " << tolerance_ << ", with a numeric gradient of at least "
     << kNontrivial * tolerance_ << " somewhere";
  return os.str();
}

bool EachAgreesWithin::match(const std::vector<GradientCheck>& checks) const {
  if (parameters_ == 0 || checks.size() != parameters_) return false;
  const AgreesWithin each(tolerance_);
  return std::all_of(checks.begin(), checks.end(), [&](const GradientCheck& c) { return each.match(c); });
}

std::string EachAgreesWithin::describe() const {
  std::ostringstream os;
  os << "is one check for each of " << parameters_ << " parameters, each of which "
     << AgreesWithin(tolerance_).describe();
  return os.str();
}

Tensor randomTensor(const std::vector<int64_t>& sizes, uint64_t seed, float low, float high) {
  Generator g(seed);
  Tensor t = Tensor::empty(sizes);
  t.uniform_(g, low, high);
  return t;
}

Tensor counting(const std::vector<int64_t>& sizes, float first) {
  std::vector<float> values(static_cast<size_t>(product(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + static_cast<float>(i);
  return Tensor::fromVector(sizes, values);
}

Tensor exactValues(const std::vector<int64_t>& sizes, int a, int m, int c, float d) {
  std::vector<float> values(static_cast<size_t>(product(sizes)));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(static_cast<int>((static_cast<size_t>(a) * i) % static_cast<size_t>(m)) - c) / d;
  return Tensor::fromVector(sizes, values);
}

Activity cloneActivity(const Activity& a) {
  Activity copy;
  copyActivity(copy, a);
  return copy;
}

std::vector<float> activityValues(const Activity& a) {
  std::vector<Tensor> tensors;
  collectTensors(a, tensors);
  std::vector<float> out;
  for (const Tensor& t : tensors) {
    const std::vector<float> v = t.toVector();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

namespace {

// Random weights shaped as `out`, one seed per tensor, on the output's devices.
struct OutputWeights {
  OutputWeights(const Activity& out, uint64_t seed) {
    std::vector<Tensor> tensors;
    collectTensors(out, tensors);
    for (size_t k = 0; k < tensors.size(); ++k) {
      const Tensor w = randomTensor(tensors[k].sizes(), seed + k);
      values.push_back(w.toVector());
      onDevice.push_back(w.to(tensors[k].device()));
    }
    size_t next = 0;
    asActivity = shapedLike(out, next);
  }
  double dot(const Activity& out) const {
    std::vector<Tensor> tensors;
    collectTensors(out, tensors);
    double s = 0;
    for (size_t k = 0; k < tensors.size(); ++k) s += test::dot(tensors[k], values[k]);
    return s;
  }
  Activity shapedLike(const Activity& like, size_t& next) const {
    if (like.isTensor()) return onDevice[next++];
    Table t;
    for (const Activity& item : like.table()) t.push_back(shapedLike(item, next));
    return t;
  }
  std::vector<std::vector<float>> values;
  std::vector<Tensor> onDevice;
  Activity asActivity;
};

}  // namespace

std::vector<GradientCheck> checkInputGradients(Module& module, const Activity& input,
                                               const GradCheckOptions& options) {
  const Activity x = cloneActivity(input);
  const OutputWeights w(module.forward(x), options.seed);
  std::vector<Tensor> gradients, inputs;
  collectTensors(cloneActivity(module.updateGradInputActivity(x, w.asActivity)), gradients);
  collectTensors(x, inputs);
  std::vector<GradientCheck> checks;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<float> analytic = k < gradients.size() ? gradients[k].toVector() : std::vector<float>();
    checks.push_back(compare(
        inputs[k], analytic, [&] { return w.dot(module.forward(x)); }, options.step));
  }
  return checks;
}

std::vector<GradientCheck> checkParameterGradients(Module& module, const Activity& input,
                                                   const GradCheckOptions& options) {
  const Activity x = cloneActivity(input);
  const OutputWeights w(module.forward(x), options.seed);
  module.zeroGradParameters();
  module.backward(x, w.asActivity);
  auto [values, gradients] = module.parameters();
  std::vector<GradientCheck> checks;
  for (size_t p = 0; p < values.size(); ++p) {
    const std::vector<float> analytic = gradients[p].toVector();
    checks.push_back(compare(
        values[p], analytic, [&] { return w.dot(module.forward(x)); }, options.step));
  }
  return checks;
}

std::vector<GradientCheck> checkCriterionGradients(Criterion& criterion, const Activity& input,
                                                   const Activity& target, const GradCheckOptions& options) {
  const Activity x = cloneActivity(input);
  criterion.forward(x, target);
  std::vector<Tensor> gradients, inputs;
  collectTensors(cloneActivity(criterion.backward(x, target)), gradients);
  collectTensors(x, inputs);
  std::vector<GradientCheck> checks;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<float> analytic = k < gradients.size() ? gradients[k].toVector() : std::vector<float>();
    checks.push_back(compare(
        inputs[k], analytic, [&] { return static_cast<double>(criterion.forward(x, target)); }, options.step));
  }
  return checks;
}

// The checks of a tensor input are those of the activity that holds it.
GradientCheck checkInputGradient(Module& module, const Tensor& input, const GradCheckOptions& options) {
  return checkInputGradients(module, Activity(input), options).at(0);
}

std::vector<GradientCheck> checkParameterGradients(Module& module, const Tensor& input,
                                                   const GradCheckOptions& options) {
  return checkParameterGradients(module, Activity(input), options);
}

GradientCheck checkCriterionGradient(Criterion& criterion, const Tensor& input, const Tensor& target,
                                     const GradCheckOptions& options) {
  return checkCriterionGradients(criterion, Activity(input), Activity(target), options).at(0);
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

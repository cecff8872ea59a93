// Test support: finite-difference gradient checks and small tensor helpers.
//
// The checks compare the analytic gradient of f = sum(module(input) * w), for a fixed
// random w, with central differences (f(x + h) - f(x - h)) / 2h, element by element. The
// module, its input and a criterion's target may be on any device: each perturbation is made
// in a host copy of the tensor and copied to its device.
//
// A check passes (AgreesWithin) when its worst error |analytic - numeric| / max(1, |numeric|)
// is below the tolerance and the numeric gradient is not trivial: its largest magnitude is at
// least kNontrivial times the tolerance. An analytic gradient of zeros has exactly that
// largest magnitude (below 1) as its error, so it cannot pass where the true gradient is small.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nn/core/Module.h"
#include "nn/criterions/Criterion.h"

namespace nn::test {

struct GradCheckOptions {
  float step = 1e-2f;
  /// The output weights' seed (one tensor per seed from it): one that no test's input uses, so
  /// that gradOutput is never the input itself (an identity-like module would then hide a wrong
  /// gradient behind a symmetric one).
  uint64_t seed = 0x5eed0000;
};

/// The outcome of one finite-difference check.
struct GradientCheck {
  /// Worst |analytic - numeric| / max(1, |numeric|) over the elements; infinite where the
  /// analytic gradient has another number of elements.
  double error;
  /// Largest |numeric| over the elements.
  double largest;
};
std::ostream& operator<<(std::ostream& os, const GradientCheck& check);

/// How far above the tolerance the numeric gradient's largest magnitude must be.
constexpr double kNontrivial = 10;

/// dLoss/dInput.
GradientCheck checkInputGradient(Module& module, const Tensor& input, const GradCheckOptions& options = {});
/// dLoss/dParameter for each parameter, in parameters() order.
std::vector<GradientCheck> checkParameterGradients(Module& module, const Tensor& input,
                                                   const GradCheckOptions& options = {});
/// For inputs and outputs that are tables: f = the sum over the output's tensors of
/// sum(out_k * w_k). dLoss/dInput for each tensor of the input, depth first.
std::vector<GradientCheck> checkInputGradients(Module& module, const Activity& input,
                                               const GradCheckOptions& options = {});
/// dLoss/dParameter for each parameter, with an input that may be a table.
std::vector<GradientCheck> checkParameterGradients(Module& module, const Activity& input,
                                                   const GradCheckOptions& options = {});
/// dLoss/dInput for each tensor of a criterion's table input.
std::vector<GradientCheck> checkCriterionGradients(Criterion& criterion, const Activity& input,
                                                   const Activity& target, const GradCheckOptions& options = {});

/// A deep copy: the same tables, each tensor cloned.
Activity cloneActivity(const Activity& a);
/// The values of every tensor of `a`, depth first, one after another.
std::vector<float> activityValues(const Activity& a);

/// dLoss/dInput for a criterion.
GradientCheck checkCriterionGradient(Criterion& criterion, const Tensor& input, const Tensor& target,
                                     const GradCheckOptions& options = {});

/// REQUIRE_THAT(checkInputGradient(m, x), AgreesWithin(1e-3)): the check's error is below
/// `tolerance` and its numeric gradient is at least kNontrivial * tolerance somewhere.
class AgreesWithin : public Catch::MatcherBase<GradientCheck> {
 public:
  explicit AgreesWithin(double tolerance) : tolerance_(tolerance) {}
  bool match(const GradientCheck& check) const override;
  std::string describe() const override;

 private:
  double tolerance_;
};

/// REQUIRE_THAT(checkParameterGradients(m, x), EachAgreesWithin(1e-3, 2)): one check per
/// parameter, `parameters` of them (so that a module without the parameters the test means
/// to check fails instead of passing on no checks), each as AgreesWithin(tolerance).
class EachAgreesWithin : public Catch::MatcherBase<std::vector<GradientCheck>> {
 public:
  EachAgreesWithin(double tolerance, size_t parameters) : tolerance_(tolerance), parameters_(parameters) {}
  bool match(const std::vector<GradientCheck>& checks) const override;
  std::string describe() const override;

 private:
  double tolerance_;
  size_t parameters_;
};

/// Uniform values in [low, high) from a fixed seed.
Tensor randomTensor(const std::vector<int64_t>& sizes, uint64_t seed, float low = -1.f, float high = 1.f);
/// first, first + 1, ... in row-major order, on the host.
Tensor counting(const std::vector<int64_t>& sizes, float first = 1.f);
/// ((a i) % m - c) / d at flat row-major index i, on the host: the exact values of the
/// reference scripts (tests/make_*_reference.py), which compute them alike.
Tensor exactValues(const std::vector<int64_t>& sizes, int a, int m, int c, float d);
/// Largest |a[i] - b[i]|; infinite if the sizes differ.
double maxAbsDiff(const Tensor& a, const std::vector<float>& b);
double maxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace nn::test

// The point-wise losses (MSE, Abs, SmoothL1, DistKLDiv, BCE), shared by the CPU loops and the
// CUDA kernels: each is a struct with term(x, t), one element's contribution to the loss, and
// gradient(x, t), its derivative in x. The kernels of both backends are templates over these
// structs: a loss = sum_i w_i term(x_i, t_i), summed in double and divided by n when averaged
// (Loss.h), and gradIn_i = gradient(x_i, t_i) (norm w_i). The backends' tables are built from
// the list All, so a new point-wise loss is a struct here listed in All, a criterion and a test.
// kLibm marks the losses that call exp or log, whose last bit the host's libm and CUDA may
// round differently (nothing reads it yet: of these losses the formula probe covers Mse alone).
#pragma once

#include <math.h>  // fabsf, logf, log1pf: the float functions of both the host and nvcc device code
#include <stdint.h>

#include "nn/math/HostDevice.h"
#include "nn/math/TypeList.h"

namespace nn::math::loss {

/// Torch7's MSECriterion: (x - t)^2.
struct Mse {
  /// Whether term or gradient calls exp or log, whose last bit the host's libm and CUDA may round differently,
  /// so that the two devices' results need not agree bit for bit. Every loss has it; false here.
  static constexpr bool kLibm = false;
  /// (x - t)^2.
  NN_HD static float term(float x, float t) {
    const float d = x - t;
    return d * d;
  }
  /// 2 (x - t).
  NN_HD static float gradient(float x, float t) { return 2.f * (x - t); }
};

/// Torch7's AbsCriterion: |x - t|; the gradient is the sign of x - t, 0 where they are equal
/// (PyTorch's sign, where Torch7 gave -1).
struct Abs {
  /// False: arithmetic only (Mse::kLibm says what the flag means).
  static constexpr bool kLibm = false;
  /// |x - t|.
  NN_HD static float term(float x, float t) { return fabsf(x - t); }
  /// The sign of x - t: 1, -1, or 0 where x == t.
  NN_HD static float gradient(float x, float t) {
    const float d = x - t;
    return d > 0.f ? 1.f : (d < 0.f ? -1.f : 0.f);
  }
};

/// Torch7's SmoothL1Criterion (PyTorch's smooth_l1_loss with beta 1): 0.5 d^2 where |d| < 1,
/// |d| - 0.5 elsewhere, d = x - t; the gradient d inside, the sign of d outside.
struct SmoothL1 {
  /// False: arithmetic only (Mse::kLibm says what the flag means).
  static constexpr bool kLibm = false;
  /// 0.5 d^2 where |d| < 1, else |d| - 0.5, d = x - t.
  NN_HD static float term(float x, float t) {
    const float d = fabsf(x - t);
    return d < 1.f ? 0.5f * d * d : d - 0.5f;
  }
  /// d = x - t clamped to [-1, 1].
  NN_HD static float gradient(float x, float t) {
    const float d = x - t;
    return d < -1.f ? -1.f : (d > 1.f ? 1.f : d);
  }
};

/// Torch7's DistKLDivCriterion (PyTorch's kl_div of log-probabilities x): t (log t - x) where
/// t > 0, else 0; the gradient -t where t > 0, else 0.
struct DistKLDiv {
  /// True: term calls logf (Mse::kLibm says what the flag means).
  static constexpr bool kLibm = true;
  /// t (log t - x) where t > 0, else 0; x is a log-probability.
  NN_HD static float term(float x, float t) { return t > 0.f ? t * (logf(t) - x) : 0.f; }
  /// -t where t > 0, else 0.
  NN_HD static float gradient(float, float t) { return t > 0.f ? -t : 0.f; }
};

/// Torch7's BCECriterion as PyTorch 1.13 computes it: -(t log x + (1 - t) log(1 - x)) with each
/// log at least -100 (so that x = 0 or 1 gives a finite loss), and the gradient
/// (x - t) / max(x (1 - x), 1e-12). x in [0, 1] (the criterion checks).
struct Bce {
  /// True: term calls logf and log1pf (Mse::kLibm says what the flag means).
  static constexpr bool kLibm = true;
  /// -(t log x + (1 - t) log(1 - x)), each log at least -100.
  NN_HD static float term(float x, float t) {
    const float logX = fmaxf(logf(x), -100.f), log1mX = fmaxf(log1pf(-x), -100.f);
    return (t - 1.f) * log1mX - t * logX;
  }
  /// (x - t) / max(x (1 - x), 1e-12).
  NN_HD static float gradient(float x, float t) { return (x - t) / fmaxf((1.f - x) * x, 1e-12f); }
};

/// Element i's term of the loss L, times its weight (weights[i % period]; 1 without weights).
template <typename L>
NN_HD float weightedTerm(const float* x, const float* t, const float* weights, int64_t period, int64_t i) {
  return (weights ? weights[i % period] : 1.f) * L::term(x[i], t[i]);
}

/// Element i's gradient of the loss L: gradient(x, t) * norm * weight.
template <typename L>
NN_HD float weightedGradient(const float* x, const float* t, const float* weights, int64_t period, int64_t i,
                             float norm) {
  return L::gradient(x[i], t[i]) * norm * (weights ? weights[i % period] : 1.f);
}

/// A list of point-wise losses; the backends' table builders take a `List<L...>` to unpack All.
template <typename... L>
using List = TypeList<L...>;

/// Every point-wise loss above: the backends' tables hold one entry for each, in this order.
using All = List<Mse, Abs, SmoothL1, DistKLDiv, Bce>;

/// The place of loss L in All: its entry's in the kernel tables.
template <typename L>
constexpr int indexOf() {
  constexpr int at = indexIn<L>(All{});
  static_assert(at >= 0, "a point-wise loss is listed in All");
  return at;
}

}  // namespace nn::math::loss

// Element-wise activation formulas, shared by the CPU loops and the CUDA kernels.
//
// Each activation is a struct built from the module's parameter block (ActivationArgs) with
// forward(x) and backward(x, y, gradOutput), where y = forward(x); the kernels of both
// backends are templates over these structs, and their tables are built from the list All, so
// that a new activation is a struct here listed in All, its module and its test, nothing more.
// A backward that reads only the signs of x may be given y for x: the in-place modules,
// whose input was overwritten by the output, do that (kInPlace says where it is correct).
// kForwardLibm and kBackwardLibm say which pass calls exp, log or tanh, whose last bit the
// host's libm and CUDA may round differently (the formula probe of tests/ compares the rest
// bit for bit). Every activation is listed in All, so that the probe covers it.
#pragma once

#include <math.h>  // tanhf, expf, expm1f, log1pf, erff, fabsf: the float functions of both the host and nvcc device code

#include "nn/math/HostDevice.h"
#include "nn/math/TypeList.h"

namespace nn::math {

/// The parameters of an activation, as its module holds them; each struct says which it reads.
struct ActivationArgs {
  /// The first parameter: LeakyReLU's negval, ELU's alpha, Threshold's th, HardTanh's min, SoftPlus's beta.
  float a = 0.f;
  /// The second parameter: Threshold's v, HardTanh's max, SoftPlus's threshold.
  float b = 0.f;
};

namespace activation {

/// ReLU (Torch7's Threshold(0, 0)): 0 where x <= 0, else x; the gradient passes where x is
/// not <= 0. As PyTorch's relu and threshold_backward, NaN stays NaN and its gradient passes
/// (a NaN weight shows in the loss rather than training on unseen); -0 and +0 give +0.
struct ReLU {
  /// Whether backward gives the same gradient when passed the output y for x, so that the module may work in
  /// place (ActivationModule: its input then holds the output). Every activation has it; true here, as the
  /// backward reads only whether x <= 0.
  static constexpr bool kInPlace = true;  // y <= 0 exactly where x <= 0 (y = +0), NaN where x is
  /// Whether forward calls exp, log or tanh, whose last bit the host's libm and CUDA may round differently: the
  /// formula probe (tests/math/FormulaProbe.h) then compares the devices' results within a small relative tolerance,
  /// where it otherwise compares them bit for bit. Every activation has it; false here.
  static constexpr bool kForwardLibm = false;
  /// The same as kForwardLibm, for backward; false here.
  static constexpr bool kBackwardLibm = false;
  /// Reads no parameter.
  NN_HD explicit ReLU(const ActivationArgs&) {}
  /// y = x where x > 0 or x is NaN, else +0.
  NN_HD float forward(float x) const { return x <= 0.f ? 0.f : x; }
  /// gradInput = gradOutput where x > 0 or x is NaN, else 0; reads x (or y in its place) only.
  NN_HD float backward(float x, float, float gradOutput) const { return x <= 0.f ? 0.f : gradOutput; }
};

/// Tanh. As in Torch7, the backward reads the output y = tanh(x): dy/dx = 1 - y^2.
struct Tanh {
  /// True: the backward reads y only (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = true;
  /// True: tanhf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// Reads no parameter.
  NN_HD explicit Tanh(const ActivationArgs&) {}
  /// y = tanh(x).
  NN_HD float forward(float x) const { return tanhf(x); }
  /// gradInput = gradOutput (1 - y^2), from the output y.
  NN_HD float backward(float, float y, float gradOutput) const { return gradOutput * (1.f - y * y); }
};

/// Sigmoid 1 / (1 + e^-x). As in Torch7, the backward reads the output y: dy/dx = y (1 - y).
struct Sigmoid {
  /// True: the backward reads y only (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = true;
  /// True: expf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// Reads no parameter.
  NN_HD explicit Sigmoid(const ActivationArgs&) {}
  /// y = 1 / (1 + e^-x).
  NN_HD float forward(float x) const { return 1.f / (1.f + expf(-x)); }
  /// gradInput = gradOutput (1 - y) y, from the output y.
  NN_HD float backward(float, float y, float gradOutput) const { return gradOutput * (1.f - y) * y; }
};

/// LeakyReLU (Torch7's nn.LeakyReLU(negval)): x where x > 0, else negval x. a = negval.
struct LeakyReLU {
  /// True: the backward reads only whether x > 0, which y tells alike (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = true;  // y > 0 exactly where x > 0 while negval >= 0 (the module checks)
  /// False: arithmetic only (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = false;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// The slope below 0 (args.a).
  float negval;
  /// negval = args.a.
  NN_HD explicit LeakyReLU(const ActivationArgs& args) : negval(args.a) {}
  /// y = x where x > 0, else negval x.
  NN_HD float forward(float x) const { return x > 0.f ? x : negval * x; }
  /// gradInput = gradOutput where x > 0, else negval gradOutput.
  NN_HD float backward(float x, float, float gradOutput) const { return x > 0.f ? gradOutput : negval * gradOutput; }
};

/// ELU (Torch7's nn.ELU(alpha)): x where x > 0, else alpha (e^x - 1), through expm1 as PyTorch.
/// As in Torch7, the backward reads the output: dy/dx = y + alpha where y <= 0. a = alpha.
struct ELU {
  /// True where alpha >= 0, which the module checks in place (ReLU::kInPlace says what the flag means): y > 0
  /// exactly where x > 0 then, so the backward given y for x takes the same branch.
  static constexpr bool kInPlace = true;
  /// True: expm1f (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// The scale of the negative part (args.a): y tends to -alpha as x goes to -infinity.
  float alpha;
  /// alpha = args.a.
  NN_HD explicit ELU(const ActivationArgs& args) : alpha(args.a) {}
  /// y = x where x > 0, else alpha (e^x - 1).
  NN_HD float forward(float x) const { return x > 0.f ? x : alpha * expm1f(x); }
  /// gradInput = gradOutput where x > 0, else gradOutput (y + alpha) = gradOutput alpha e^x. The branch is
  /// x's: with a negative alpha, y is positive where x is negative.
  NN_HD float backward(float x, float y, float gradOutput) const {
    return x > 0.f ? gradOutput : gradOutput * (y + alpha);
  }
};

/// Threshold (Torch7's nn.Threshold(th, v)): v where x <= th, else x; the gradient passes where
/// x is not <= th. NaN stays NaN and its gradient passes, as PyTorch's threshold. a = th, b = v.
struct Threshold {
  /// True: the backward reads only whether x <= th, which y tells alike (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = true;  // y <= th exactly where x <= th while v <= th (the module checks)
  /// False: arithmetic only (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = false;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// th (args.a): values at or below it are replaced.
  float threshold;
  /// v (args.b): what replaces them.
  float value;
  /// threshold = args.a, value = args.b.
  NN_HD explicit Threshold(const ActivationArgs& args) : threshold(args.a), value(args.b) {}
  /// y = value where x <= threshold, else x.
  NN_HD float forward(float x) const { return x <= threshold ? value : x; }
  /// gradInput = 0 where x <= threshold, else gradOutput.
  NN_HD float backward(float x, float, float gradOutput) const { return x <= threshold ? 0.f : gradOutput; }
};

/// HardTanh (Torch7's nn.HardTanh(min, max); ReLU6 is HardTanh(0, 6)): x clamped to [min, max].
/// The gradient passes strictly inside, and, as PyTorch's hardtanh_backward, where x is NaN.
/// a = min, b = max.
struct HardTanh {
  /// True: the backward reads only whether x lies strictly inside (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = true;  // y lies strictly inside exactly where x does
  /// False: arithmetic only (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = false;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// min (args.a), the lower clamp.
  float low;
  /// max (args.b), the upper clamp.
  float high;
  /// low = args.a, high = args.b.
  NN_HD explicit HardTanh(const ActivationArgs& args) : low(args.a), high(args.b) {}
  /// y = x clamped to [low, high]; NaN stays NaN.
  NN_HD float forward(float x) const { return x < low ? low : (x > high ? high : x); }
  /// gradInput = gradOutput where low < x < high or x is NaN, else 0.
  NN_HD float backward(float x, float, float gradOutput) const {
    return x <= low || x >= high ? 0.f : gradOutput;
  }
};

/// SoftPlus (Torch7's nn.SoftPlus(beta, threshold)): log(1 + e^(beta x)) / beta, and x itself
/// where beta x > threshold (PyTorch's formula). The backward reads x, as PyTorch's:
/// dy/dx = z / (z + 1) with z = e^(beta x), 1 above the threshold. a = beta, b = threshold.
struct SoftPlus {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// True: expf and log1pf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// True: expf.
  static constexpr bool kBackwardLibm = true;
  /// The sharpness beta (args.a).
  float beta;
  /// Where beta x exceeds it (args.b), y = x and the gradient passes unchanged.
  float threshold;
  /// beta = args.a, threshold = args.b.
  NN_HD explicit SoftPlus(const ActivationArgs& args) : beta(args.a), threshold(args.b) {}
  /// y = log(1 + e^(beta x)) / beta, or x where beta x > threshold.
  NN_HD float forward(float x) const { return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta; }
  /// gradInput = gradOutput z / (z + 1) with z = e^(beta x), or gradOutput where beta x > threshold.
  NN_HD float backward(float x, float, float gradOutput) const {
    if (x * beta > threshold) return gradOutput;
    const float z = expf(x * beta);
    return gradOutput * z / (z + 1.f);
  }
};

/// SoftSign (Torch7's nn.SoftSign): x / (1 + |x|). The backward reads x: dy/dx = 1 / (1 + |x|)^2.
struct SoftSign {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// False: arithmetic only (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = false;
  /// False: arithmetic only.
  static constexpr bool kBackwardLibm = false;
  /// Reads no parameter.
  NN_HD explicit SoftSign(const ActivationArgs&) {}
  /// y = x / (1 + |x|).
  NN_HD float forward(float x) const { return x / (1.f + fabsf(x)); }
  /// gradInput = gradOutput / (1 + |x|)^2.
  NN_HD float backward(float x, float, float gradOutput) const {
    const float d = 1.f + fabsf(x);
    return gradOutput / (d * d);
  }
};

/// LogSigmoid (Torch7's nn.LogSigmoid): log(1 / (1 + e^-x)), as PyTorch computes it without
/// overflow: min(x, 0) - log(1 + e^-|x|). The backward reads x: dy/dx = 1 - sigmoid(x), which
/// with z = e^-|x| is 1 / (1 + z) below 0 and z / (1 + z) from 0 on.
struct LogSigmoid {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// True: expf and log1pf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// True: expf.
  static constexpr bool kBackwardLibm = true;
  /// Reads no parameter.
  NN_HD explicit LogSigmoid(const ActivationArgs&) {}
  /// y = min(x, 0) - log(1 + e^-|x|).
  NN_HD float forward(float x) const { return (x < 0.f ? x : 0.f) - log1pf(expf(-fabsf(x))); }
  /// gradInput = gradOutput (1 - sigmoid(x)), through z = e^-|x|.
  NN_HD float backward(float x, float, float gradOutput) const {
    const float z = expf(-fabsf(x));
    return gradOutput * (x < 0.f ? 1.f : z) / (1.f + z);
  }
};

/// SiLU (PyTorch's nn.SiLU, the swish of Ramachandran et al.): x sigmoid(x) = x / (1 + e^-x), as
/// PyTorch computes it. The backward reads x, as PyTorch's: dy/dx = s (1 + x (1 - s)) with
/// s = sigmoid(x).
struct SiLU {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// True: expf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// True: expf.
  static constexpr bool kBackwardLibm = true;
  /// Reads no parameter.
  NN_HD explicit SiLU(const ActivationArgs&) {}
  /// y = x / (1 + e^-x): -0 far below 0, where e^-x overflows to infinity.
  NN_HD float forward(float x) const { return x / (1.f + expf(-x)); }
  /// gradInput = gradOutput s (1 + x (1 - s)), s = 1 / (1 + e^-x).
  NN_HD float backward(float x, float, float gradOutput) const {
    const float s = 1.f / (1.f + expf(-x));
    return gradOutput * s * (1.f + x * (1.f - s));
  }
};

/// GELU (PyTorch's nn.GELU(approximate='none'), Hendrycks and Gimpel): x Phi(x), Phi the standard
/// normal's distribution function, 0.5 x (1 + erf(x / sqrt 2)), as PyTorch computes it. The
/// backward reads x, as PyTorch's: dy/dx = Phi(x) + x phi(x), phi(x) = e^(-x^2 / 2) / sqrt(2 pi).
struct GELU {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// True: erff (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// True: erff and expf.
  static constexpr bool kBackwardLibm = true;
  /// 1 / sqrt 2, float's nearest (PyTorch's M_SQRT1_2).
  static constexpr float kSqrtHalf = 0.70710678118654752f;
  /// 1 / sqrt(2 pi), float's nearest (PyTorch's M_2_SQRTPI * M_SQRT1_2 * 0.5).
  static constexpr float kNormal = 0.39894228040143268f;
  /// Reads no parameter.
  NN_HD explicit GELU(const ActivationArgs&) {}
  /// y = x 0.5 (1 + erf(x / sqrt 2)).
  NN_HD float forward(float x) const { return x * 0.5f * (1.f + erff(x * kSqrtHalf)); }
  /// gradInput = gradOutput (Phi(x) + x phi(x)).
  NN_HD float backward(float x, float, float gradOutput) const {
    const float cdf = 0.5f * (1.f + erff(x * kSqrtHalf));
    const float pdf = kNormal * expf(x * x * -0.5f);
    return gradOutput * (cdf + x * pdf);
  }
};

/// GELU's tanh approximation (PyTorch's nn.GELU(approximate='tanh')): 0.5 x (1 + tanh(u)) with
/// u = sqrt(2 / pi) (x + 0.044715 x^3), as PyTorch computes it. The backward reads x, as
/// PyTorch's: dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 3 0.044715 x^2), t = tanh(u).
struct GELUTanh {
  /// False: the backward reads x (ReLU::kInPlace says what the flag means).
  static constexpr bool kInPlace = false;
  /// True: tanhf (ReLU::kForwardLibm says what the flag means).
  static constexpr bool kForwardLibm = true;
  /// True: tanhf.
  static constexpr bool kBackwardLibm = true;
  /// sqrt(2 / pi), float's nearest (PyTorch's M_SQRT2 * M_2_SQRTPI * 0.5).
  static constexpr float kBeta = 0.79788456080286536f;
  /// The cubic term's weight (PyTorch's kKappa).
  static constexpr float kKappa = 0.044715f;
  /// Reads no parameter.
  NN_HD explicit GELUTanh(const ActivationArgs&) {}
  /// y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
  NN_HD float forward(float x) const {
    const float cube = x * x * x;
    return 0.5f * x * (1.f + tanhf(kBeta * (x + kKappa * cube)));
  }
  /// gradInput = gradOutput (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 3 0.044715 x^2)).
  NN_HD float backward(float x, float, float gradOutput) const {
    const float square = x * x;
    const float t = tanhf(kBeta * (x + kKappa * (square * x)));
    const float left = 0.5f * x;
    const float right = 1.f + t;
    const float inner = kBeta * (1.f + 3.f * kKappa * square);
    return gradOutput * (0.5f * right + left * (1.f - t * t) * inner);
  }
};

/// A list of activations; the backends' table builders take a `List<F...>` to unpack All.
template <typename... A>
using List = TypeList<A...>;

/// Every activation above: the backends' tables hold one entry for each, in this order.
using All = List<ReLU, Tanh, Sigmoid, LeakyReLU, ELU, Threshold, HardTanh, SoftPlus, SoftSign, LogSigmoid, SiLU, GELU,
                 GELUTanh>;

/// The place of activation F in All: its entry's in the kernel tables.
template <typename F>
constexpr int indexOf() {
  constexpr int at = indexIn<F>(All{});
  static_assert(at >= 0, "an activation is listed in All");
  return at;
}

}  // namespace activation
}  // namespace nn::math

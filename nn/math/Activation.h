// Element-wise activation formulas, shared by the CPU loops and the CUDA kernels.
//
// Each activation is a struct built from the module's parameter block (ActivationArgs) with
// forward(x) and backward(x, y, gradOutput), where y = forward(x); the kernels of both
// backends are templates over these structs, so that an activation with a parameter is a new
// struct here and a new entry in each table (nn/backend/ElementwiseKernels.h), nothing more.
// A backward that reads only the signs of x may be given y for x: the in-place modules,
// whose input was overwritten by the output, do that (kInPlace says where it is correct).
// kForwardLibm and kBackwardLibm say which pass calls exp, log or tanh, whose last bit the
// host's libm and CUDA may round differently (the formula probe of tests/ compares the rest
// bit for bit). Every activation is listed in All, so that the probe covers it.
#pragma once

#include <math.h>  // tanhf, expf, expm1f, log1pf: the float functions of both the host and nvcc device code

#include "nn/HostDevice.h"

namespace nn::math {

/// The parameters of an activation, as its module holds them; each struct says which it reads.
struct ActivationArgs {
  float a = 0.f;
  float b = 0.f;
};

namespace activation {

/// ReLU (Torch7's Threshold(0, 0)): 0 where x <= 0, else x; the gradient passes where x is
/// not <= 0. As PyTorch's relu and threshold_backward, NaN stays NaN and its gradient passes
/// (a NaN weight shows in the loss rather than training on unseen); -0 and +0 give +0.
struct ReLU {
  static constexpr bool kInPlace = true;  // y <= 0 exactly where x <= 0 (y = +0), NaN where x is
  static constexpr bool kForwardLibm = false, kBackwardLibm = false;
  NN_HD explicit ReLU(const ActivationArgs&) {}
  NN_HD float forward(float x) const { return x <= 0.f ? 0.f : x; }
  NN_HD float backward(float x, float, float gradOutput) const { return x <= 0.f ? 0.f : gradOutput; }
};

/// Tanh. As in Torch7, the backward reads the output y = tanh(x): dy/dx = 1 - y^2.
struct Tanh {
  static constexpr bool kInPlace = true;
  static constexpr bool kForwardLibm = true, kBackwardLibm = false;
  NN_HD explicit Tanh(const ActivationArgs&) {}
  NN_HD float forward(float x) const { return tanhf(x); }
  NN_HD float backward(float, float y, float gradOutput) const { return gradOutput * (1.f - y * y); }
};

/// Sigmoid 1 / (1 + e^-x). As in Torch7, the backward reads the output y: dy/dx = y (1 - y).
struct Sigmoid {
  static constexpr bool kInPlace = true;
  static constexpr bool kForwardLibm = true, kBackwardLibm = false;
  NN_HD explicit Sigmoid(const ActivationArgs&) {}
  NN_HD float forward(float x) const { return 1.f / (1.f + expf(-x)); }
  NN_HD float backward(float, float y, float gradOutput) const { return gradOutput * (1.f - y) * y; }
};

/// LeakyReLU (Torch7's nn.LeakyReLU(negval)): x where x > 0, else negval x. a = negval.
struct LeakyReLU {
  static constexpr bool kInPlace = true;  // y > 0 exactly where x > 0 while negval >= 0 (the module checks)
  static constexpr bool kForwardLibm = false, kBackwardLibm = false;
  float negval;
  NN_HD explicit LeakyReLU(const ActivationArgs& args) : negval(args.a) {}
  NN_HD float forward(float x) const { return x > 0.f ? x : negval * x; }
  NN_HD float backward(float x, float, float gradOutput) const { return x > 0.f ? gradOutput : negval * gradOutput; }
};

/// ELU (Torch7's nn.ELU(alpha)): x where x > 0, else alpha (e^x - 1), through expm1 as PyTorch.
/// As in Torch7, the backward reads the output: dy/dx = y + alpha where y <= 0. a = alpha.
struct ELU {
  static constexpr bool kInPlace = true;  // y > 0 exactly where x > 0 while alpha >= 0 (the module checks)
  static constexpr bool kForwardLibm = true, kBackwardLibm = false;
  float alpha;
  NN_HD explicit ELU(const ActivationArgs& args) : alpha(args.a) {}
  NN_HD float forward(float x) const { return x > 0.f ? x : alpha * expm1f(x); }
  NN_HD float backward(float, float y, float gradOutput) const {
    return y > 0.f ? gradOutput : gradOutput * (y + alpha);
  }
};

/// Threshold (Torch7's nn.Threshold(th, v)): v where x <= th, else x; the gradient passes where
/// x is not <= th. NaN stays NaN and its gradient passes, as PyTorch's threshold. a = th, b = v.
struct Threshold {
  static constexpr bool kInPlace = true;  // y <= th exactly where x <= th while v <= th (the module checks)
  static constexpr bool kForwardLibm = false, kBackwardLibm = false;
  float threshold, value;
  NN_HD explicit Threshold(const ActivationArgs& args) : threshold(args.a), value(args.b) {}
  NN_HD float forward(float x) const { return x <= threshold ? value : x; }
  NN_HD float backward(float x, float, float gradOutput) const { return x <= threshold ? 0.f : gradOutput; }
};

/// HardTanh (Torch7's nn.HardTanh(min, max); ReLU6 is HardTanh(0, 6)): x clamped to [min, max].
/// The gradient passes strictly inside, and, as PyTorch's hardtanh_backward, where x is NaN.
/// a = min, b = max.
struct HardTanh {
  static constexpr bool kInPlace = true;  // y lies strictly inside exactly where x does
  static constexpr bool kForwardLibm = false, kBackwardLibm = false;
  float low, high;
  NN_HD explicit HardTanh(const ActivationArgs& args) : low(args.a), high(args.b) {}
  NN_HD float forward(float x) const { return x < low ? low : (x > high ? high : x); }
  NN_HD float backward(float x, float, float gradOutput) const {
    return x <= low || x >= high ? 0.f : gradOutput;
  }
};

/// SoftPlus (Torch7's nn.SoftPlus(beta, threshold)): log(1 + e^(beta x)) / beta, and x itself
/// where beta x > threshold (PyTorch's formula). The backward reads x, as PyTorch's:
/// dy/dx = z / (z + 1) with z = e^(beta x), 1 above the threshold. a = beta, b = threshold.
struct SoftPlus {
  static constexpr bool kInPlace = false;
  static constexpr bool kForwardLibm = true, kBackwardLibm = true;
  float beta, threshold;
  NN_HD explicit SoftPlus(const ActivationArgs& args) : beta(args.a), threshold(args.b) {}
  NN_HD float forward(float x) const { return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta; }
  NN_HD float backward(float x, float, float gradOutput) const {
    if (x * beta > threshold) return gradOutput;
    const float z = expf(x * beta);
    return gradOutput * z / (z + 1.f);
  }
};

template <typename... A>
struct List {
  static constexpr int kCount = sizeof...(A);
};

/// Every activation above.
using All = List<ReLU, Tanh, Sigmoid, LeakyReLU, ELU, Threshold, HardTanh, SoftPlus>;

}  // namespace activation
}  // namespace nn::math

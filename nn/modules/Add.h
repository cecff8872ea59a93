// nn::Add: y = x + b with a learned bias b broadcast against the input (nn/modules/BroadcastShape.h):
// Add(n) on [n] or [N, n] (or on any input with n elements per sample, as Torch7's batch mode),
// Add(n, true) one scalar (Torch7's Add(inputSize, scalar)), Add({1, C, 1, 1}) a bias per
// plane.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

/// The arguments of Add.
struct AddOptions {
  /// The bias's sizes, lined up with the input's last dimensions (nn/modules/BroadcastShape.h): {n}, {1} for one
  /// scalar, {1, C, 1, 1} for one per plane; not empty, each positive. Torch7 gives inputSize (or scalar).
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

/// Torch7's nn.Add: adds a learned bias, broadcast against the input.
class Add : public WithOptions<AddOptions, BroadcastParameterModule> {
 public:
  /// A bias of inputSize elements, or of one where scalar.
  explicit Add(int64_t inputSize, bool scalar = false)
      : Add(Options{std::vector<int64_t>{scalar ? 1 : inputSize}}) {}
  /// A bias of `sizes` (AddOptions::sizes).
  explicit Add(std::vector<int64_t> sizes) : Add(Options{std::move(sizes)}) {}
  /// A bias of options.sizes, which must be non-empty and positive (else an nn::Error).
  explicit Add(const Options& options);

  std::string typeName() const override { return "nn.Add"; }

  /// b, of AddOptions::sizes; starts uniform in +-1/sqrt(its number of elements).
  Tensor& bias = parameter_;
  /// Gradient of the loss with respect to b, of b's sizes: gradOutput summed over the dimensions b is broadcast
  /// along, accumulated (times scale) by accGradParameters; zeroed by zeroGradParameters.
  Tensor& gradBias = gradParameter_;
};

}  // namespace nn

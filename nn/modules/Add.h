// nn::Add: y = x + b with a learned bias b broadcast against the input (nn/modules/BroadcastShape.h):
// Add(n) on [n] or [N, n] (or on any input with n elements per sample, as Torch7's batch mode),
// Add(n, true) one scalar (Torch7's Add(inputSize, scalar)), Add({1, C, 1, 1}) a bias per
// plane.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

struct AddOptions {
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

class Add : public WithOptions<AddOptions, BroadcastParameterModule> {
 public:
  /// A bias of inputSize elements, or of one where scalar.
  explicit Add(int64_t inputSize, bool scalar = false)
      : Add(Options{std::vector<int64_t>{scalar ? 1 : inputSize}}) {}
  explicit Add(std::vector<int64_t> sizes) : Add(Options{std::move(sizes)}) {}
  explicit Add(const Options& options);

  std::string typeName() const override { return "nn.Add"; }

  Tensor& bias = parameter_;
  Tensor& gradBias = gradParameter_;
};

}  // namespace nn

// nn::CMul: y = x * w element by element, with a learned weight w of the given sizes broadcast
// against the input (nn/modules/BroadcastShape.h): CMul(C, H, W) on [N, C, H, W], CMul(1, C, 1, 1) a
// scale per plane (Torch7's CMul(size)).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

/// The arguments of CMul.
struct CMulOptions {
  /// The weight's sizes (Torch7's size), lined up with the input's last dimensions (nn/modules/BroadcastShape.h);
  /// not empty, each positive.
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

/// Torch7's nn.CMul: the input times a learned weight, element by element, the weight broadcast against it.
class CMul : public WithOptions<CMulOptions, BroadcastParameterModule> {
 public:
  /// A weight of `sizes` (CMulOptions::sizes).
  explicit CMul(std::vector<int64_t> sizes) : CMul(Options{std::move(sizes)}) {}
  /// A weight of sizes {size, sizes...}: CMul(n), CMul(1, C, 1, 1).
  template <typename... S>
  explicit CMul(int64_t size, S... sizes) : CMul(std::vector<int64_t>{size, static_cast<int64_t>(sizes)...}) {}
  /// A weight of options.sizes, which must be non-empty and positive (else an nn::Error).
  explicit CMul(const Options& options);

  std::string typeName() const override { return "nn.CMul"; }

  /// w, of CMulOptions::sizes; starts uniform in +-1/sqrt(its number of elements).
  Tensor& weight = parameter_;
  /// Gradient of the loss with respect to w, of w's sizes: gradOutput * input summed over the dimensions w is
  /// broadcast along, accumulated (times scale) by accGradParameters; zeroed by zeroGradParameters.
  Tensor& gradWeight = gradParameter_;
};

}  // namespace nn

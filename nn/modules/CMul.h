// nn::CMul: y = x * w element by element, with a learned weight w of the given sizes broadcast
// against the input (nn/modules/BroadcastShape.h): CMul(C, H, W) on [N, C, H, W], CMul(1, C, 1, 1) a
// scale per plane (Torch7's CMul(size)).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

struct CMulOptions {
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

class CMul : public WithOptions<CMulOptions, BroadcastParameterModule> {
 public:
  explicit CMul(std::vector<int64_t> sizes) : CMul(Options{std::move(sizes)}) {}
  template <typename... S>
  explicit CMul(int64_t size, S... sizes) : CMul(std::vector<int64_t>{size, static_cast<int64_t>(sizes)...}) {}
  explicit CMul(const Options& options);

  std::string typeName() const override { return "nn.CMul"; }

  Tensor& weight = parameter_;
  Tensor& gradWeight = gradParameter_;
};

}  // namespace nn

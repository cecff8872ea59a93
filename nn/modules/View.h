// nn::View: the input's elements, in order, under new sizes, one of which may be -1 (inferred).
// The output shares the input's storage, as Torch7's view does; nothing is copied.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ReshapingModule.h"

namespace nn {

struct ViewOptions {
  /// Output sizes, all positive except at most one -1, which takes the remaining elements:
  /// View({-1, 800}) turns [N, 50, 4, 4] into [N, 800].
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

class View : public WithOptions<ViewOptions, ReshapingModule> {
 public:
  explicit View(std::vector<int64_t> sizes) : View(Options{std::move(sizes)}) {}
  explicit View(const Options& options);

  std::string typeName() const override { return "nn.View"; }
  /// "nn.View(-1, 800)", as Torch7 prints it.
  std::string toString() const override;

  const std::vector<int64_t>& sizes() const { return options_.sizes; }

 protected:
  /// sizes_ with the -1 filled in for this input (kept in resolved_).
  const std::vector<int64_t>& outputSizes(const Tensor& input) override;

 private:
  int64_t knownCount_ = 1;  // product of the sizes other than -1
  int inferred_ = -1;       // index of the -1 in the sizes, or -1
  std::vector<int64_t> resolved_;
};

}  // namespace nn

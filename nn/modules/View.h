// nn::View: the input's elements, in order, under new sizes, one of which may be -1 (inferred).
// The output shares the input's storage, as Torch7's view does; nothing is copied.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ReshapingModule.h"

namespace nn {

/// The constructor arguments of nn::View.
struct ViewOptions {
  /// Output sizes, all positive except at most one -1, which takes the remaining elements:
  /// View({-1, 800}) turns [N, 50, 4, 4] into [N, 800].
  std::vector<int64_t> sizes;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
  }
};

/// Torch7's nn.View: the input's elements under the given sizes, one of them possibly inferred.
class View : public WithOptions<ViewOptions, ReshapingModule> {
 public:
  /// View({-1, 800}) as Torch7's nn.View(-1, 800); throws unless the sizes are positive but at most one -1.
  explicit View(std::vector<int64_t> sizes) : View(Options{std::move(sizes)}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit View(const Options& options);

  std::string typeName() const override { return "nn.View"; }
  /// "nn.View(-1, 800)", as Torch7 prints it.
  std::string toString() const override;

  /// The sizes as given, -1 included.
  const std::vector<int64_t>& sizes() const { return options_.sizes; }

 protected:
  /// sizes() with the -1 filled in for this input (kept in resolved_).
  const std::vector<int64_t>& outputSizes(const Tensor& input) override;

 private:
  int64_t knownCount_ = 1;  // product of the sizes other than -1
  int inferred_ = -1;       // index of the -1 in the sizes, or -1
  std::vector<int64_t> resolved_;
};

}  // namespace nn

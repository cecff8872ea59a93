// nn::Transpose: the input with pairs of dimensions swapped, one pair after the other, copied
// into a contiguous output; Torch7's nn.Transpose({d1, d2}, {d3, d4}, ...), with dimensions
// from 0. gradInput is gradOutput with the swaps undone.
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "nn/core/Module.h"
#include "nn/core/Options.h"

namespace nn {

/// The constructor arguments of nn::Transpose.
struct TransposeOptions {
  /// The pairs, flattened: {d1, d2, d3, d4} swaps d1 with d2, then d3 with d4.
  std::vector<int64_t> pairs;

  template <typename F>
  void visit(F&& field) {
    field("pairs", pairs);
  }
};

/// Torch7's nn.Transpose: dimensions swapped pair by pair, the result copied to a contiguous output.
class Transpose : public WithOptions<TransposeOptions> {
 public:
  /// Transpose({{0, 1}, {2, 3}}), as Torch7's nn.Transpose({1, 2}, {3, 4}) counted from 0.
  Transpose(std::initializer_list<std::pair<int, int>> pairs) : Transpose(std::vector<std::pair<int, int>>(pairs)) {}
  /// The same from a vector of pairs; throws unless there is at least one and every dimension is at least 0.
  explicit Transpose(const std::vector<std::pair<int, int>>& pairs);
  /// The same from options (what nn::load rebuilds from), the pairs flattened.
  explicit Transpose(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.Transpose"; }
  /// "nn.Transpose({0, 1}, {2, 3})"
  std::string toString() const override;
  void clearState() override;

 private:
  // For an input: the output's sizes and the input's contiguous strides, both swapped.
  void permute(const Tensor& input);

  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
  Tensor view_;  // the input, or gradInput, seen with the swaps
};

}  // namespace nn

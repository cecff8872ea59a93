// nn::ParallelCriterion: Torch7's ParallelCriterion(repeatTarget): the weighted sum of several
// criterions, criterion i applied to item i of the input table and item i of the target table
// (or to the whole target, the same for every criterion, with repeatTarget). gradInput is the
// table of the criterions' gradients, each times its weight.
#pragma once

#include <memory>
#include <vector>

#include "nn/criterions/Criterion.h"

namespace nn {

/// Torch7's nn.ParallelCriterion: the weighted sum of criterions over the items of a table input.
class ParallelCriterion : public Criterion {
 public:
  /// repeatTarget: give every criterion the whole target, instead of item i of a target table.
  /// The inherited sizeAverage is unused: each criterion has its own.
  explicit ParallelCriterion(bool repeatTarget = false) : repeatTarget_(repeatTarget) {}

  /// Appends a criterion with its weight; returns this criterion for chaining.
  ParallelCriterion& add(std::shared_ptr<Criterion> criterion, float weight = 1.f);
  /// The number of criterions added.
  size_t size() const { return criterions_.size(); }

  /// For tables; tensors are an nn::Error that says so.
  float updateOutput(const Tensor& input, const Tensor& target) override;
  /// For tables, as updateOutput; a tensor input is an nn::Error.
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  /// The sum over i of weight_i times criterion i's loss of input item i (summed in double, in order).
  float updateOutputActivity(const Activity& input, const Activity& target) override;
  /// A table of one item per criterion: criterion i's gradient for input item i, times weight_i.
  const Activity& updateGradInputActivity(const Activity& input, const Activity& target) override;

  /// "nn.ParallelCriterion {(1): nn.MSECriterion, weight 0.5; ...}" over lines, as Torch7's.
  std::string toString() const override;

 private:
  struct Weighted {
    std::shared_ptr<Criterion> criterion;
    float weight;
  };
  // The input as a table of one item per criterion, and target item i (or the whole target).
  const Table& checkInput(const Activity& input, const Activity& target) const;
  const Activity& targetOf(const Activity& target, size_t i) const;

  bool repeatTarget_;
  std::vector<Weighted> criterions_;
};

}  // namespace nn

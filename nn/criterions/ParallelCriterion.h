// nn::ParallelCriterion: Torch7's ParallelCriterion(repeatTarget): the weighted sum of several
// criterions, criterion i applied to item i of the input table and item i of the target table
// (or to the whole target, the same for every criterion, with repeatTarget). gradInput is the
// table of the criterions' gradients, each times its weight.
#pragma once

#include <memory>
#include <vector>

#include "nn/criterions/Criterion.h"

namespace nn {

class ParallelCriterion : public Criterion {
 public:
  explicit ParallelCriterion(bool repeatTarget = false) : repeatTarget_(repeatTarget) {}

  /// Appends a criterion with its weight; returns this criterion for chaining.
  ParallelCriterion& add(std::shared_ptr<Criterion> criterion, float weight = 1.f);
  size_t size() const { return criterions_.size(); }

  /// For tables; tensors are an nn::Error that says so.
  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  float updateOutputActivity(const Activity& input, const Activity& target) override;
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

// nn::ParallelCriterion.
#include "nn/criterions/ParallelCriterion.h"

#include <sstream>

namespace nn {

namespace {

void scaleActivity(Activity& a, float factor) {
  if (a.isTensor()) {
    a.tensor().mul_(factor);
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) scaleActivity(a[i], factor);
}

}  // namespace

ParallelCriterion& ParallelCriterion::add(std::shared_ptr<Criterion> criterion, float weight) {
  NN_CHECK(criterion != nullptr, "nn.ParallelCriterion.add: expected a criterion, got nullptr");
  criterions_.push_back({std::move(criterion), weight});
  return *this;
}

float ParallelCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  return updateOutputActivity(Activity(input), Activity(target));
}

const Tensor& ParallelCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  return updateGradInputActivity(Activity(input), Activity(target)).tensor();
}

const Table& ParallelCriterion::checkInput(const Activity& input, const Activity& target) const {
  NN_CHECK(!criterions_.empty(), toString() << ": expected at least one criterion; add() them first");
  NN_CHECK(input.isTable() && input.size() == criterions_.size(),
           toString() << ": expected input, a table of " << criterions_.size() << " items (one per criterion), got "
                      << input.describe());
  NN_CHECK(repeatTarget_ || (target.isTable() && target.size() == criterions_.size()),
           toString() << ": expected target, a table of " << criterions_.size()
                      << " items (one per criterion; or repeatTarget), got " << target.describe());
  return input.table();
}

const Activity& ParallelCriterion::targetOf(const Activity& target, size_t i) const {
  return repeatTarget_ ? target : target[i];
}

float ParallelCriterion::updateOutputActivity(const Activity& input, const Activity& target) {
  const Table& in = checkInput(input, target);
  // Summed in double and in order, as a reference computes it.
  double loss = 0;
  for (size_t i = 0; i < criterions_.size(); ++i) {
    const Weighted& c = criterions_[i];
    loss += static_cast<double>(c.weight) * c.criterion->forward(in[i], targetOf(target, i));
  }
  output = static_cast<float>(loss);
  return output;
}

const Activity& ParallelCriterion::updateGradInputActivity(const Activity& input, const Activity& target) {
  const Table& in = checkInput(input, target);
  Table& g = gradInputActivity_.setTable(criterions_.size());
  for (size_t i = 0; i < criterions_.size(); ++i) {
    const Weighted& c = criterions_[i];
    copyActivity(g[i], c.criterion->backward(in[i], targetOf(target, i)));
    if (c.weight != 1.f) scaleActivity(g[i], c.weight);
  }
  return gradInputActivity_;
}

std::string ParallelCriterion::toString() const {
  std::ostringstream s;
  s << "nn.ParallelCriterion" << (repeatTarget_ ? "(repeatTarget)" : "") << " {";
  for (size_t i = 0; i < criterions_.size(); ++i)
    s << "\n  (" << i + 1 << "): " << criterions_[i].criterion->toString() << ", weight " << criterions_[i].weight;
  s << "\n}";
  return s.str();
}

}  // namespace nn

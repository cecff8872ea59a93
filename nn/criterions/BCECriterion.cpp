// nn::BCECriterion: the weights' and the input's checks; the rest is PointwiseCriterion's.
#include "nn/criterions/BCECriterion.h"

#include "nn/backend/Backend.h"

namespace nn {

BCECriterion::BCECriterion(Tensor weights, bool sizeAverage)
    : PointwiseCriterion(Entry::of<math::loss::Bce>(), sizeAverage, std::move(weights)) {
  checkWeights(this->weights(), "nn.BCECriterion");
}

void BCECriterion::checkInput(const Tensor& input) {
  const Tensor& x = contiguousIn(input, checkedInput_);
  backendOf(input.device())
      .checkValues(
          input.device(), x.rawData(), x.numel(), {math::ValueKind::UnitInterval}, [this] { return toString(); },
          input.sizes());
}

}  // namespace nn

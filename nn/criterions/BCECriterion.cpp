// nn::BCECriterion: the weights' and the input's checks; the rest is PointwiseCriterion's.
#include "nn/criterions/BCECriterion.h"

#include <cmath>

#include "nn/backend/Backend.h"

namespace nn {

BCECriterion::BCECriterion(Tensor weights, bool sizeAverage)
    : PointwiseCriterion(Entry::of<math::loss::Bce>(), sizeAverage, std::move(weights)) {
  const Tensor& w = this->weights();
  if (w.numel() == 0) return;
  NN_CHECK(w.dim() == 1, "nn.BCECriterion: expected 1-D weights, got " << w.shapeString());
  const Tensor host = w.to(Device());
  for (int64_t i = 0; i < host.numel(); ++i)
    NN_CHECK(std::isfinite(host.data()[i]),
             "nn.BCECriterion: expected finite weights, got " << host.data()[i] << " at " << i);
}

void BCECriterion::checkInput(const Tensor& input) {
  const Tensor& x = contiguousIn(input, checkedInput_);
  backendOf(input.device())
      .checkValues(
          input.device(), x.rawData(), x.numel(), {math::ValueKind::UnitInterval}, [this] { return toString(); },
          input.sizes());
}

}  // namespace nn

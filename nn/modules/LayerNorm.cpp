// nn::LayerNorm: its checks and rows here, its passes RowNormalization's, which the kernels
// (NormalizationKernels) see as one row per sample of the normalised elements, each element its
// own parameter.
#include "nn/modules/LayerNorm.h"

#include <sstream>

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(LayerNorm);

LayerNorm::LayerNorm(const Options& options) : WithOptions(options) {
  const auto& [normalizedShape, eps, affine] = options_;
  NN_CHECK(!normalizedShape.empty(), "nn.LayerNorm: expected a normalized shape of at least one size, got none");
  for (int64_t s : normalizedShape)
    NN_CHECK(s > 0 && mulInto(elements_, s, elements_) && elements_ <= kMaxElements,
             "nn.LayerNorm: expected a normalized shape of positive sizes holding at most "
                 << kMaxElements << " elements, got " << shapeString(normalizedShape));
  NN_CHECK(eps >= 0, toString() << ": expected eps >= 0, got " << eps);
  makeParameters(affine, normalizedShape);
}

std::string LayerNorm::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << shapeString(options_.normalizedShape);
  if (options_.eps != 1e-5f) s << ", eps=" << options_.eps;
  if (!options_.elementwiseAffine) s << ", elementwiseAffine=false";
  s << ")";
  return s.str();
}

void LayerNorm::checkInput(const Tensor& input) const {
  const std::vector<int64_t>& shape = options_.normalizedShape;
  const int dims = static_cast<int>(shape.size());
  bool fits = input.dim() >= dims;
  for (int k = 0; fits && k < dims; ++k) fits = input.size(input.dim() - dims + k) == shape[k];
  NN_CHECK(fits, toString() << ": expected input of size [..., " << shapeString(shape).substr(1) << ", got "
                            << input.shapeString());
  if (options_.elementwiseAffine) checkDevice(input, weight.device(), "input");
}

NormalizationShape LayerNorm::shapeOf(const Tensor& input) const {
  NormalizationShape shape;
  shape.rows = input.numel() / elements_;
  shape.groupSize = elements_;
  return shape;
}

}  // namespace nn

// nn::JoinTable: joins with joinAlong and splits gradOutput with copyAlong, allocating nothing
// in a steady step.
#include "nn/modules/JoinTable.h"

#include "nn/modules/Dimension.h"

namespace nn {

NN_REGISTER_MODULE(JoinTable);

int JoinTable::dimensionFor(const Tensor& first) const {
  const int64_t d = resolveDimension(options_.dim, options_.nInputDims, first.dim());
  NN_CHECK(d >= 0 && d < first.dim(), toString() << ": expected inputs with dimension " << options_.dim
                                                 << batchDimensionNote(options_.nInputDims) << ", got input[0] of size "
                                                 << first.shapeString());
  return static_cast<int>(d);
}

const std::vector<const Tensor*>& JoinTable::checkInput(const Activity& input) {
  const Table& t = tableInput(input, "input");
  NN_CHECK(!t.empty(), toString() << ": expected a table of tensors, got an empty table");
  parts_.clear();
  for (size_t i = 0; i < t.size(); ++i) {
    NN_CHECK(t[i].isTensor(), toString() << ": expected a table of tensors, got " << input.describe());
    const Tensor& x = t[i].tensor();
    NN_CHECK(x.device() == t[0].tensor().device(), toString() << ": expected input[" << i << "] on "
                                                              << t[0].tensor().device().str() << " as input[0], got "
                                                              << x.device().str());
    parts_.push_back(&x);
  }
  return parts_;
}

const Activity& JoinTable::updateOutputActivity(const Activity& input) {
  const std::vector<const Tensor*>& parts = checkInput(input);
  joinAlong(parts, dimensionFor(*parts[0]), parts[0]->device(), output, sizes_,
            [&](size_t i) { return toString() + ": input[" + std::to_string(i) + "]"; });
  return setOutput(output);
}

const Activity& JoinTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<const Tensor*>& parts = checkInput(input);
  const Tensor& g = tensorInput(gradOutput, "gradOutput");
  checkGradOutput(output, g);
  const Tensor gc = g.contiguous();
  const int dim = dimensionFor(*parts[0]);
  Table& gradIn = gradInputActivity_.setTable(parts.size());
  int64_t start = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    Tensor& gi = gradIn[i].setTensor().resizeAs_(*parts[i]);
    const int64_t length = parts[i]->size(dim);
    copyAlong(gi, 0, gc, start, dim, length);
    start += length;
  }
  return gradInputActivity_;
}

}  // namespace nn

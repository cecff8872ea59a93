// nn::ElementwiseTable: the checks of the element-wise table modules.
#include "nn/modules/ElementwiseTable.h"

namespace nn {

const std::vector<Tensor>& ElementwiseTable::checkInput(const Activity& input) {
  const Table& t = tableInput(input, "input");
  NN_CHECK(count_ == 0 ? t.size() >= 1 : t.size() == count_,
           toString() << ": expected a table of " << (count_ == 0 ? "at least 1" : std::to_string(count_))
                      << " tensors, got " << input.describe());
  if (inputs_.size() != t.size()) inputs_.resize(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    NN_CHECK(t[i].isTensor(), toString() << ": expected a table of tensors, got " << input.describe());
    const Tensor& x = t[i].tensor();
    const Tensor& first = t[0].tensor();
    NN_CHECK(x.sizes() == first.sizes() && x.device() == first.device(),
             toString() << ": expected input[" << i << "] of size " << first.shapeString() << " on "
                        << first.device().str() << " as input[0], got " << x.shapeString() << " on "
                        << x.device().str());
    inputs_[i] = x.contiguous();
  }
  return inputs_;
}

Tensor ElementwiseTable::checkGradOutput(const Activity& gradOutput) const {
  const Tensor& g = tensorInput(gradOutput, "gradOutput");
  Module::checkGradOutput(output, g);
  return g.contiguous();
}

Tensor& ElementwiseTable::gradInputItem(size_t i) {
  return gradInputActivity_.table()[i].setTensor().resizeAs_(inputs_[i]);
}

}  // namespace nn

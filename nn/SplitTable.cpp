// nn::SplitTable: each slice is a view of the input (select) copied into the module's own
// tensor, and each item of gradOutput copied into its slice of gradInput.
#include "nn/SplitTable.h"

namespace nn {

NN_REGISTER_MODULE(SplitTable);

SplitTable::SplitTable(const Options& options) : WithOptions(options) {
  NN_CHECK(options_.dim >= 0, toString() << ": expected a dimension of at least 0, got " << options_.dim);
}

const Tensor& SplitTable::checkInput(const Activity& input) const {
  const Tensor& x = tensorInput(input, "input");
  NN_CHECK(x.dim() > options_.dim, toString() << ": expected input with a dimension " << options_.dim
                                              << " (dimensions count from 0), got " << x.shapeString());
  return x;
}

const Activity& SplitTable::updateOutputActivity(const Activity& input) {
  const Tensor& x = checkInput(input);
  const auto n = static_cast<size_t>(x.size(options_.dim));
  Table& out = outputActivity_.setTable(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor slice = x.select(options_.dim, static_cast<int64_t>(i));
    out[i].setTensor().resizeAs_(slice).copy_(slice);
  }
  return outputActivity_;
}

const Activity& SplitTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const Tensor& x = checkInput(input);
  checkAlike(outputActivity_, gradOutput, "gradOutput");
  gradInput.resizeAs_(x);
  for (size_t i = 0; i < gradOutput.size(); ++i)
    gradInput.select(options_.dim, static_cast<int64_t>(i)).copy_(gradOutput[i].tensor());
  return setGradInput(gradInput);
}

}  // namespace nn

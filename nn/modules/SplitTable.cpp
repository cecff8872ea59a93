// nn::SplitTable: each index along dim copied by copyAlong into the module's own tensor, and each
// item of gradOutput copied back into its place in gradInput; no view is made, so a steady step
// allocates nothing.
#include "nn/modules/SplitTable.h"

#include "nn/modules/Dimension.h"

namespace nn {

NN_REGISTER_MODULE(SplitTable);

int SplitTable::dimensionFor(const Tensor& input) const {
  const int64_t d = resolveDimension(options_.dim, options_.nInputDims, input.dim());
  NN_CHECK(d >= 0 && d < input.dim(), toString() << ": expected input with dimension " << options_.dim
                                                 << batchDimensionNote(options_.nInputDims)
                                                 << " (dimensions count from 0), got " << input.shapeString());
  return static_cast<int>(d);
}

const Activity& SplitTable::updateOutputActivity(const Activity& input) {
  const Tensor& x = contiguousIn(tensorInput(input, "input"), contiguousInput_);
  const int dim = dimensionFor(x);
  const auto n = static_cast<size_t>(x.size(dim));
  // Item i is x's index i along dim: copied through a view of the item that keeps dim (size 1).
  kept_ = x.sizes();
  kept_[static_cast<size_t>(dim)] = 1;
  itemSizes_ = x.sizes();
  itemSizes_.erase(itemSizes_.begin() + dim);
  Table& out = outputActivity_.setTable(n);
  for (size_t i = 0; i < n; ++i) {
    Tensor& item = out[i].setTensor().resize_(itemSizes_, x.device());
    itemKept_.set_(item.storage(), item.storageOffset(), kept_);
    copyAlong(itemKept_, 0, x, static_cast<int64_t>(i), dim, 1);
  }
  return outputActivity_;
}

const Activity& SplitTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const Tensor& x = tensorInput(input, "input");
  const int dim = dimensionFor(x);
  checkAlike(outputActivity_, gradOutput, "gradOutput");
  gradInput.resize_(x.sizes(), x.device());
  kept_ = x.sizes();
  kept_[static_cast<size_t>(dim)] = 1;
  for (size_t i = 0; i < gradOutput.size(); ++i) {
    const Tensor& g = contiguousIn(gradOutput[i].tensor(), contiguousGradOutput_);
    itemKept_.set_(g.storage(), g.storageOffset(), kept_);
    copyAlong(gradInput, static_cast<int64_t>(i), itemKept_, 0, dim, 1);
  }
  return setGradInput(gradInput);
}

void SplitTable::clearState() {
  Module::clearState();
  for (Tensor* t : {&contiguousInput_, &contiguousGradOutput_, &itemKept_}) t->set_(Tensor());
}

}  // namespace nn

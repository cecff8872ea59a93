// nn::SplitTable: each index along dim copied by copyAlong into the module's own tensor, and each
// item of gradOutput copied back into its place in gradInput; no view is made, so a steady step
// allocates nothing.
#include "nn/modules/SplitTable.h"

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
  const Tensor& x = contiguousIn(checkInput(input), contiguousInput_);
  const auto n = static_cast<size_t>(x.size(options_.dim));
  // Item i is x's index i along dim: copied through a view of the item that keeps dim (size 1).
  kept_ = x.sizes();
  kept_[static_cast<size_t>(options_.dim)] = 1;
  itemSizes_ = x.sizes();
  itemSizes_.erase(itemSizes_.begin() + options_.dim);
  Table& out = outputActivity_.setTable(n);
  for (size_t i = 0; i < n; ++i) {
    Tensor& item = out[i].setTensor().resize_(itemSizes_, x.device());
    itemKept_.set_(item.storage(), item.storageOffset(), kept_);
    copyAlong(itemKept_, 0, x, static_cast<int64_t>(i), options_.dim, 1);
  }
  return outputActivity_;
}

const Activity& SplitTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const Tensor& x = checkInput(input);
  checkAlike(outputActivity_, gradOutput, "gradOutput");
  gradInput.resize_(x.sizes(), x.device());
  kept_ = x.sizes();
  kept_[static_cast<size_t>(options_.dim)] = 1;
  for (size_t i = 0; i < gradOutput.size(); ++i) {
    const Tensor& g = contiguousIn(gradOutput[i].tensor(), contiguousGradOutput_);
    itemKept_.set_(g.storage(), g.storageOffset(), kept_);
    copyAlong(gradInput, static_cast<int64_t>(i), itemKept_, 0, options_.dim, 1);
  }
  return setGradInput(gradInput);
}

void SplitTable::clearState() {
  Module::clearState();
  for (Tensor* t : {&contiguousInput_, &contiguousGradOutput_, &itemKept_}) t->set_(Tensor());
}

}  // namespace nn

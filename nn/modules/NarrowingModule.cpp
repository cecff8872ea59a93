// nn::NarrowingModule: copies along one dimension, out and back.
#include "nn/modules/NarrowingModule.h"

#include "nn/tensor/Checked.h"

namespace nn {

void NarrowingModule::checkSlice(const Tensor& input, const Slice& slice) const {
  NN_CHECK(slice.dim < input.dim(), toString() << ": expected an input with more than " << slice.dim
                                               << " dimensions, got " << input.shapeString());
  const int64_t size = input.size(slice.dim);
  NN_CHECK(slice.length >= 1 && rangeWithin(slice.offset, slice.length, size),
           toString() << ": expected indices " << rangeString(slice.offset, slice.length) << " within the size " << size
                      << " of dimension " << slice.dim << ", got input " << input.shapeString());
}

void NarrowingModule::resolveSizes(const Tensor& input, const Slice& slice) {
  kept_ = input.sizes();
  kept_[static_cast<size_t>(slice.dim)] = slice.length;
  sizes_ = kept_;
  if (!slice.keepsDim) sizes_.erase(sizes_.begin() + slice.dim);
}

const Tensor& NarrowingModule::updateOutput(const Tensor& input) {
  const Slice slice = sliceOf(input);
  resolveSizes(input, slice);
  output.resize_(sizes_, input.device());
  outputKept_.set_(output.storage(), output.storageOffset(), kept_);
  copyAlong(outputKept_, 0, contiguousIn(input, contiguousInput_), slice.offset, slice.dim, slice.length);
  return output;
}

const Tensor& NarrowingModule::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const Slice slice = sliceOf(input);
  resolveSizes(input, slice);
  checkGradOutput(input, sizes_, gradOutput);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  gradOutputKept_.set_(g.storage(), g.storageOffset(), kept_);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  copyAlong(gradInput, slice.offset, gradOutputKept_, 0, slice.dim, slice.length);
  return gradInput;
}

void NarrowingModule::clearState() {
  Module::clearState();
  for (Tensor* t : {&contiguousInput_, &contiguousGradOutput_, &outputKept_, &gradOutputKept_}) t->set_(Tensor());
}

}  // namespace nn

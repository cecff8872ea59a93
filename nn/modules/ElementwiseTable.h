// nn::ElementwiseTable: the base of CAddTable, CSubTable, CMulTable and CDivTable, modules that
// combine a table of tensors of one size, element by element, into one tensor of that size.
// It checks the input and keeps the table of gradients; gradInput item i is the module's own
// tensor (as Torch7's, a copy: the branches below may write into their gradOutput in place).
#pragma once

#include "nn/core/TableModule.h"

namespace nn {

/// The base of the element-wise table modules (CAddTable, CSubTable, CMulTable, CDivTable).
class ElementwiseTable : public TableModule<> {
 protected:
  /// count: the number of tensors the module takes, or 0 for any number from 1.
  explicit ElementwiseTable(size_t count) : count_(count) {}

  /// The input, checked: a table of `count` tensors (or at least one), all of input[0]'s sizes
  /// and device, each contiguous (a copy of one that is not).
  const std::vector<Tensor>& checkInput(const Activity& input);
  /// gradOutput, checked against the output (its sizes and device), contiguous.
  Tensor checkGradOutput(const Activity& gradOutput) const;
  /// Item i of gradInput, resized to the inputs' size on their device.
  Tensor& gradInputItem(size_t i);
  /// Makes gradInput a table of n tensors.
  void setGradInputSize(size_t n) { gradInputActivity_.setTable(n); }

 private:
  size_t count_;
  std::vector<Tensor> inputs_;
};

}  // namespace nn

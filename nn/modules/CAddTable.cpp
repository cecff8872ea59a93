// nn::CAddTable.
#include "nn/modules/CAddTable.h"

namespace nn {

NN_REGISTER_MODULE(CAddTable);

const Activity& CAddTable::updateOutputActivity(const Activity& input) {
  const std::vector<Tensor>& x = checkInput(input);
  // In place, input[0] (or its contiguous copy, where it had other strides) becomes the output;
  // else the first two inputs are summed in one pass (Torch7's z:add(x, y)), the same floats as a
  // copy of the first plus the second.
  size_t next = 1;
  if (options_.inplace) {
    output.set_(x[0]);
  } else if (x.size() > 1) {
    output.add_(x[0], x[1]);
    next = 2;
  } else {
    output.resizeAs_(x[0]).copy_(x[0]);
  }
  for (size_t i = next; i < x.size(); ++i) output.add_(x[i]);
  return setOutput(output);
}

const Activity& CAddTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<Tensor>& x = checkInput(input);
  const Tensor g = checkGradOutput(gradOutput);
  setGradInputSize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (options_.inplace)
      gradInputActivity_.table()[i].setTensor().set_(g);
    else
      gradInputItem(i).copy_(g);
  }
  return gradInputActivity_;
}

}  // namespace nn

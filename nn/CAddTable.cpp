// nn::CAddTable.
#include "nn/CAddTable.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(CAddTable);

const Activity& CAddTable::updateOutputActivity(const Activity& input) {
  const std::vector<Tensor>& x = checkInput(input);
  output.resizeAs_(x[0]).copy_(x[0]);
  for (size_t i = 1; i < x.size(); ++i) output.add_(x[i]);
  return setOutput(output);
}

const Activity& CAddTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<Tensor>& x = checkInput(input);
  const Tensor g = checkGradOutput(gradOutput);
  setGradInputSize(x.size());
  for (size_t i = 0; i < x.size(); ++i) gradInputItem(i).copy_(g);
  return gradInputActivity_;
}

}  // namespace nn

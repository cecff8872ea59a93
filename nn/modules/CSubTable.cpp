// nn::CSubTable.
#include "nn/modules/CSubTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(CSubTable);

const Activity& CSubTable::updateOutputActivity(const Activity& input) {
  const std::vector<Tensor>& x = checkInput(input);
  output.resizeAs_(x[0]).copy_(x[0]).add_(x[1], -1.f);
  return setOutput(output);
}

const Activity& CSubTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<Tensor>& x = checkInput(input);
  const Tensor g = checkGradOutput(gradOutput);
  setGradInputSize(x.size());
  gradInputItem(0).copy_(g);
  gradInputItem(1).copy_(g).mul_(-1.f);
  return gradInputActivity_;
}

}  // namespace nn

// nn::CDivTable.
#include "nn/modules/CDivTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(CDivTable);

const Activity& CDivTable::updateOutputActivity(const Activity& input) {
  const std::vector<Tensor>& x = checkInput(input);
  output.resizeAs_(x[0]).copy_(x[0]).cdiv_(x[1]);
  return setOutput(output);
}

const Activity& CDivTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<Tensor>& x = checkInput(input);
  const Tensor g = checkGradOutput(gradOutput);
  setGradInputSize(x.size());
  const Tensor& overB = gradInputItem(0).copy_(g).cdiv_(x[1]);
  gradInputItem(1).copy_(overB).cmul_(output).mul_(-1.f);
  return gradInputActivity_;
}

}  // namespace nn

// nn::CMulTable.
#include "nn/modules/CMulTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(CMulTable);

const Activity& CMulTable::updateOutputActivity(const Activity& input) {
  const std::vector<Tensor>& x = checkInput(input);
  output.resizeAs_(x[0]).copy_(x[0]);
  for (size_t i = 1; i < x.size(); ++i) output.cmul_(x[i]);
  return setOutput(output);
}

const Activity& CMulTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const std::vector<Tensor>& x = checkInput(input);
  const Tensor g = checkGradOutput(gradOutput);
  setGradInputSize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    Tensor& gi = gradInputItem(i).copy_(g);
    for (size_t j = 0; j < x.size(); ++j)
      if (j != i) gi.cmul_(x[j]);
  }
  return gradInputActivity_;
}

}  // namespace nn

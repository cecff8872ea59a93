// nn::Identity.
#include "nn/modules/Identity.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(Identity);

const Activity& Identity::updateOutputActivity(const Activity& input) { return setOutput(input); }

const Activity& Identity::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  checkAlike(input, gradOutput, "gradOutput");
  return setGradInput(gradOutput);
}

}  // namespace nn

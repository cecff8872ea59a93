// nn::SelectTable.
#include "nn/modules/SelectTable.h"

namespace nn {

NN_REGISTER_MODULE(SelectTable);

size_t SelectTable::indexIn(const Activity& input) const {
  const auto size = static_cast<int64_t>(tableInput(input, "input").size());
  const int64_t i = options_.index < 0 ? size + options_.index : options_.index;
  NN_CHECK(i >= 0 && i < size, toString() << ": no item " << options_.index << " in the input "
                                          << input.describe() << " of " << size << " items");
  return static_cast<size_t>(i);
}

const Activity& SelectTable::updateOutputActivity(const Activity& input) {
  return setOutput(input[indexIn(input)]);
}

const Activity& SelectTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const size_t index = indexIn(input);
  checkAlike(input[index], gradOutput, "gradOutput");
  zeroActivity(gradInputActivity_, input);
  copyActivity(gradInputActivity_[index], gradOutput);
  return gradInputActivity_;
}

}  // namespace nn

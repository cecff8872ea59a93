// nn::NarrowTable.
#include "nn/NarrowTable.h"

namespace nn {

NN_REGISTER_MODULE(NarrowTable);

NarrowTable::Range NarrowTable::rangeIn(const Activity& input) const {
  const auto size = static_cast<int64_t>(tableInput(input, "input").size());
  const int64_t offset = options_.offset < 0 ? size + options_.offset : options_.offset;
  const int64_t length = options_.length < 0 ? size - offset + 1 + options_.length : options_.length;
  NN_CHECK(offset >= 0 && length >= 1 && offset + length <= size,
           toString() << ": items [" << offset << ", " << offset + length << ") are not in the input "
                      << input.describe() << " of " << size << " items");
  return {static_cast<size_t>(offset), static_cast<size_t>(length)};
}

const Activity& NarrowTable::updateOutputActivity(const Activity& input) {
  const Range r = rangeIn(input);
  Table& out = outputActivity_.setTable(r.length);
  for (size_t i = 0; i < r.length; ++i) out[i] = input[r.offset + i];
  return outputActivity_;
}

const Activity& NarrowTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  const Range r = rangeIn(input);
  NN_CHECK(gradOutput.isTable() && gradOutput.size() == r.length,
           toString() << ": expected gradOutput, a table of " << r.length << " items, got " << gradOutput.describe());
  zeroActivity(gradInputActivity_, input);
  for (size_t i = 0; i < r.length; ++i) {
    checkAlike(input[r.offset + i], gradOutput[i], "gradOutput's item");
    copyActivity(gradInputActivity_[r.offset + i], gradOutput[i]);
  }
  return gradInputActivity_;
}

}  // namespace nn

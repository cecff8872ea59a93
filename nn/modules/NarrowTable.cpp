// nn::NarrowTable.
#include "nn/modules/NarrowTable.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(NarrowTable);

NarrowTable::NarrowTable(const Options& options) : WithOptions(options) {
  NN_CHECK(options_.length != 0, toString() << ": expected a length other than 0");
  // No table has more items: beyond, the resolution below could overflow.
  NN_CHECK(isSignedExtent(options_.offset) && isSignedExtent(options_.length),
           toString() << ": expected an offset and a length from " << -kMaxElements << " to " << kMaxElements);
}

NarrowTable::Range NarrowTable::rangeIn(const Activity& input) const {
  const auto size = static_cast<int64_t>(tableInput(input, "input").size());
  // Each at most kMaxElements in size: these sums cannot overflow.
  const int64_t offset = options_.offset < 0 ? size + options_.offset : options_.offset;
  const int64_t length = options_.length < 0 ? size - offset + 1 + options_.length : options_.length;
  NN_CHECK(length >= 1 && rangeWithin(offset, length, size), toString() << ": items " << rangeString(offset, length)
                                                                        << " are not in the input " << input.describe()
                                                                        << " of " << size << " items");
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

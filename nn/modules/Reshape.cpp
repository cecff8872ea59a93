// nn::Reshape.
#include "nn/modules/Reshape.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(Reshape);

Reshape::Reshape(const Options& options) : WithOptions(options) {
  NN_CHECK(!options_.sizes.empty(), "nn.Reshape: expected at least one size, got none");
  for (int64_t s : options_.sizes) {
    NN_CHECK(s > 0, toString() << ": expected positive sizes, got " << shapeString(options_.sizes));
    NN_CHECK(
        mulInto(count_, s, count_) && count_ <= kMaxElements,
        toString() << ": sizes " << shapeString(options_.sizes) << " hold more than " << kMaxElements << " elements");
  }
}

std::string Reshape::toString() const {
  std::string s = "nn.Reshape(";
  for (size_t i = 0; i < options_.sizes.size(); ++i) s += (i ? "x" : "") + std::to_string(options_.sizes[i]);
  return s + ")";
}

const std::vector<int64_t>& Reshape::outputSizes(const Tensor& input) {
  const int64_t n = input.numel();
  const bool single = !options_.batchMode && n == count_ && (input.dim() == 0 || input.size(0) != 1);
  if (single) {
    resolved_.assign(options_.sizes.begin(), options_.sizes.end());
    return resolved_;
  }
  const int64_t batch = input.dim() == 0 ? 1 : input.size(0);
  int64_t batchCount = 0;
  NN_CHECK(input.dim() > 0 && mulInto(batch, count_, batchCount) && n == batchCount,
           toString() << ": expected "
                      << (options_.batchMode ? "" : "an input of " + std::to_string(count_) + " elements or ")
                      << "a batch [N, ...] of N x " << count_ << " elements, got " << input.shapeString() << " (" << n
                      << " elements)");
  resolved_.clear();
  resolved_.push_back(batch);
  resolved_.insert(resolved_.end(), options_.sizes.begin(), options_.sizes.end());
  return resolved_;
}

}  // namespace nn

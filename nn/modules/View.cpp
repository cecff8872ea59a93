// nn::View.
#include "nn/modules/View.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(View);

View::View(const Options& options) : WithOptions(options) {
  const std::vector<int64_t>& sizes = options_.sizes;
  NN_CHECK(!sizes.empty(), "nn.View: expected at least one size, got none");
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      NN_CHECK(inferred_ < 0, toString() << ": expected at most one size of -1, got " << shapeString(sizes));
      inferred_ = static_cast<int>(i);
    } else {
      NN_CHECK(sizes[i] > 0, toString() << ": expected positive sizes or -1, got " << shapeString(sizes));
      NN_CHECK(mulInto(knownCount_, sizes[i], knownCount_) && knownCount_ <= kMaxElements,
               toString() << ": sizes " << shapeString(sizes) << " hold more than " << kMaxElements << " elements");
    }
  }
}

std::string View::toString() const {
  std::string s = "nn.View(";
  for (size_t i = 0; i < options_.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(options_.sizes[i]);
  return s + ")";
}

const std::vector<int64_t>& View::outputSizes(const Tensor& input) {
  const int64_t n = input.numel();
  const bool fits = inferred_ >= 0 ? n % knownCount_ == 0 : n == knownCount_;
  NN_CHECK(fits, toString() << ": cannot view an input of size " << input.shapeString() << " (" << n << " elements) as "
                            << shapeString(options_.sizes));
  resolved_.assign(options_.sizes.begin(), options_.sizes.end());
  if (inferred_ >= 0) resolved_[inferred_] = n / knownCount_;
  return resolved_;
}

}  // namespace nn

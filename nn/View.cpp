// nn::View.
#include "nn/View.h"

namespace nn {

NN_REGISTER_MODULE(View);

View::View(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {
  NN_CHECK(!sizes_.empty(), "nn.View: expected at least one size, got none");
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if (sizes_[i] == -1) {
      NN_CHECK(inferred_ < 0, toString() << ": expected at most one size of -1, got " << shapeString(sizes_));
      inferred_ = static_cast<int>(i);
    } else {
      NN_CHECK(sizes_[i] > 0, toString() << ": expected positive sizes or -1, got " << shapeString(sizes_));
      NN_CHECK(!__builtin_mul_overflow(knownCount_, sizes_[i], &knownCount_) && knownCount_ <= kMaxElements,
               toString() << ": sizes " << shapeString(sizes_) << " hold more than " << kMaxElements << " elements");
    }
  }
}

ModulePtr View::create(const Config& c, std::vector<ModulePtr>) { return std::make_shared<View>(c.integers("sizes")); }

Config View::config() const { return Config().set("sizes", sizes_); }

std::string View::toString() const {
  std::string s = "nn.View(";
  for (size_t i = 0; i < sizes_.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes_[i]);
  return s + ")";
}

const std::vector<int64_t>& View::outputSizes(const Tensor& input) {
  const int64_t n = input.numel();
  const bool fits = inferred_ >= 0 ? n % knownCount_ == 0 : n == knownCount_;
  NN_CHECK(fits, toString() << ": cannot view an input of size " << input.shapeString() << " (" << n << " elements) as "
                            << shapeString(sizes_));
  resolved_.assign(sizes_.begin(), sizes_.end());
  if (inferred_ >= 0) resolved_[inferred_] = n / knownCount_;
  return resolved_;
}

}  // namespace nn

// nn::Reshape.
#include "nn/Reshape.h"

namespace nn {

NN_REGISTER_MODULE(Reshape);

Reshape::Reshape(std::vector<int64_t> sizes, bool batchMode) : sizes_(std::move(sizes)), batchMode_(batchMode) {
  NN_CHECK(!sizes_.empty(), "nn.Reshape: expected at least one size, got none");
  for (int64_t s : sizes_) {
    NN_CHECK(s > 0, toString() << ": expected positive sizes, got " << shapeString(sizes_));
    NN_CHECK(!__builtin_mul_overflow(count_, s, &count_) && count_ <= kMaxElements,
             toString() << ": sizes " << shapeString(sizes_) << " hold more than " << kMaxElements << " elements");
  }
}

ModulePtr Reshape::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<Reshape>(c.integers("sizes"), c.flag("batchMode"));
}

Config Reshape::config() const { return Config().set("sizes", sizes_).set("batchMode", batchMode_); }

std::string Reshape::toString() const {
  std::string s = "nn.Reshape(";
  for (size_t i = 0; i < sizes_.size(); ++i) s += (i ? "x" : "") + std::to_string(sizes_[i]);
  return s + ")";
}

const std::vector<int64_t>& Reshape::outputSizes(const Tensor& input) {
  const int64_t n = input.numel();
  const bool single = !batchMode_ && n == count_ && (input.dim() == 0 || input.size(0) != 1);
  if (single) {
    resolved_.assign(sizes_.begin(), sizes_.end());
    return resolved_;
  }
  const int64_t batch = input.dim() == 0 ? 1 : input.size(0);
  NN_CHECK(input.dim() > 0 && n == batch * count_,
           toString() << ": expected " << (batchMode_ ? "" : "an input of " + std::to_string(count_) + " elements or ")
                      << "a batch [N, ...] of N x " << count_ << " elements, got " << input.shapeString() << " (" << n
                      << " elements)");
  resolved_.clear();
  resolved_.push_back(batch);
  resolved_.insert(resolved_.end(), sizes_.begin(), sizes_.end());
  return resolved_;
}

}  // namespace nn

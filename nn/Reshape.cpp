// nn::Reshape.
#include "nn/Reshape.h"

namespace nn {

NN_REGISTER_MODULE(Reshape);

namespace {

// `t` itself when contiguous, else `buffer` resized to hold a contiguous copy of it.
const Tensor& contiguousIn(const Tensor& t, Tensor& buffer) {
  if (t.isContiguous()) return t;
  buffer.resizeAs_(t);
  buffer.copy_(t);
  return buffer;
}

}  // namespace

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

void Reshape::resolve(const Tensor& input) {
  const int64_t n = input.numel();
  const bool single = !batchMode_ && n == count_ && (input.dim() == 0 || input.size(0) != 1);
  if (single) {
    resolved_.assign(sizes_.begin(), sizes_.end());
    return;
  }
  const int64_t batch = input.dim() == 0 ? 1 : input.size(0);
  NN_CHECK(input.dim() > 0 && n == batch * count_,
           toString() << ": expected " << (batchMode_ ? "" : "an input of " + std::to_string(count_) + " elements or ")
                      << "a batch [N, ...] of N x " << count_ << " elements, got " << input.shapeString() << " (" << n
                      << " elements)");
  resolved_.clear();
  resolved_.push_back(batch);
  resolved_.insert(resolved_.end(), sizes_.begin(), sizes_.end());
}

const Tensor& Reshape::updateOutput(const Tensor& input) {
  resolve(input);
  const Tensor& source = contiguousIn(input, contiguousInput_);
  output.set_(source.storage(), source.storageOffset(), resolved_);
  return output;
}

const Tensor& Reshape::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  resolve(input);
  NN_CHECK(gradOutput.sizes() == resolved_, toString() << ": expected gradOutput of size " << shapeString(resolved_)
                                                       << " for input " << input.shapeString() << ", got "
                                                       << gradOutput.shapeString());
  const Tensor& source = contiguousIn(gradOutput, contiguousGradOutput_);
  gradInput.set_(source.storage(), source.storageOffset(), input.sizes());
  return gradInput;
}

void Reshape::clearState() {
  Module::clearState();
  contiguousInput_.set_(Tensor());
  contiguousGradOutput_.set_(Tensor());
}

}  // namespace nn

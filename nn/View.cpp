// nn::View.
#include "nn/View.h"

namespace nn {

NN_REGISTER_MODULE(View);

namespace {

// `t` itself when contiguous, else `buffer` resized to hold a contiguous copy of it.
const Tensor& contiguousIn(const Tensor& t, Tensor& buffer) {
  if (t.isContiguous()) return t;
  buffer.resizeAs_(t);
  buffer.copy_(t);
  return buffer;
}

}  // namespace

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

void View::resolve(const Tensor& input) {
  const int64_t n = input.numel();
  const bool fits = inferred_ >= 0 ? n % knownCount_ == 0 : n == knownCount_;
  NN_CHECK(fits, toString() << ": cannot view an input of size " << input.shapeString() << " (" << n << " elements) as "
                            << shapeString(sizes_));
  resolved_.assign(sizes_.begin(), sizes_.end());
  if (inferred_ >= 0) resolved_[inferred_] = n / knownCount_;
}

const Tensor& View::updateOutput(const Tensor& input) {
  resolve(input);
  const Tensor& source = contiguousIn(input, contiguousInput_);
  output.set_(source.storage(), source.storageOffset(), resolved_);
  return output;
}

const Tensor& View::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  resolve(input);
  NN_CHECK(gradOutput.sizes() == resolved_, toString() << ": expected gradOutput of size " << shapeString(resolved_)
                                                       << " for input " << input.shapeString() << ", got "
                                                       << gradOutput.shapeString());
  const Tensor& source = contiguousIn(gradOutput, contiguousGradOutput_);
  gradInput.set_(source.storage(), source.storageOffset(), input.sizes());
  return gradInput;
}

void View::clearState() {
  Module::clearState();
  contiguousInput_.set_(Tensor());
  contiguousGradOutput_.set_(Tensor());
}

}  // namespace nn

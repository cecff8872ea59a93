// nn::Transpose: one strided copy each way, through a view the module keeps.
#include "nn/modules/Transpose.h"

#include <utility>

namespace nn {

NN_REGISTER_MODULE(Transpose);

namespace {

TransposeOptions flatten(const std::vector<std::pair<int, int>>& pairs) {
  TransposeOptions options;
  for (const auto& [a, b] : pairs) {
    options.pairs.push_back(a);
    options.pairs.push_back(b);
  }
  return options;
}

}  // namespace

Transpose::Transpose(const std::vector<std::pair<int, int>>& pairs) : Transpose(flatten(pairs)) {}

Transpose::Transpose(const Options& options) : WithOptions(options) {
  NN_CHECK(!options_.pairs.empty() && options_.pairs.size() % 2 == 0,
           "nn.Transpose: expected pairs of dimensions, got " << shapeString(options_.pairs));
  for (int64_t d : options_.pairs)
    NN_CHECK(d >= 0, toString() << ": expected dimensions of at least 0, got " << d);
}

std::string Transpose::toString() const {
  std::string s = "nn.Transpose(";
  for (size_t i = 0; i + 1 < options_.pairs.size(); i += 2)
    s += (i ? ", {" : "{") + std::to_string(options_.pairs[i]) + ", " + std::to_string(options_.pairs[i + 1]) + "}";
  return s + ")";
}

void Transpose::permute(const Tensor& input) {
  sizes_ = input.sizes();
  strides_.resize(sizes_.size());
  int64_t stride = 1;
  for (size_t d = sizes_.size(); d-- > 0;) {
    strides_[d] = stride;
    stride *= std::max<int64_t>(sizes_[d], 1);
  }
  for (size_t i = 0; i + 1 < options_.pairs.size(); i += 2) {
    const int64_t a = options_.pairs[i], b = options_.pairs[i + 1];
    NN_CHECK(a < input.dim() && b < input.dim(), toString() << ": expected an input with more than "
                                                            << std::max(a, b) << " dimensions, got "
                                                            << input.shapeString());
    std::swap(sizes_[static_cast<size_t>(a)], sizes_[static_cast<size_t>(b)]);
    std::swap(strides_[static_cast<size_t>(a)], strides_[static_cast<size_t>(b)]);
  }
}

const Tensor& Transpose::updateOutput(const Tensor& input) {
  permute(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  view_.set_(x.storage(), x.storageOffset(), sizes_, strides_);
  output.resize_(sizes_, input.device());
  output.copy_(view_);
  return output;
}

const Tensor& Transpose::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  permute(input);
  checkGradOutput(input, sizes_, gradOutput);
  gradInput.resize_(input.sizes(), input.device());
  view_.set_(gradInput.storage(), gradInput.storageOffset(), sizes_, strides_);
  view_.copy_(contiguousIn(gradOutput, contiguousGradOutput_));
  return gradInput;
}

void Transpose::clearState() {
  Module::clearState();
  for (Tensor* t : {&contiguousInput_, &contiguousGradOutput_, &view_}) t->set_(Tensor());
}

}  // namespace nn

// nn::Tensor's helpers for training and evaluation code: random tensors, item(), reductions
// along a dimension and element-wise comparisons. Each makes a new tensor; the formulas are
// nn/math/TensorOps.h's, the loops the device's TensorKernels.
#include <vector>

#include "nn/Error.h"
#include "nn/Random.h"
#include "nn/Tensor.h"
#include "nn/backend/Backend.h"

namespace nn {

namespace {

const char* reductionName(math::Reduction op) {
  switch (op) {
    case math::Reduction::kSum:
      return "sum";
    case math::Reduction::kMean:
      return "mean";
    case math::Reduction::kMax:
      return "max";
    case math::Reduction::kArgmax:
      return "argmax";
  }
  return "reduce";
}

const char* comparisonName(math::Comparison op) {
  switch (op) {
    case math::Comparison::kEq:
      return "eq";
    case math::Comparison::kNe:
      return "ne";
    case math::Comparison::kLt:
      return "lt";
    case math::Comparison::kLe:
      return "le";
    case math::Comparison::kGt:
      return "gt";
    case math::Comparison::kGe:
      return "ge";
  }
  return "compare";
}

Tensor reduceAlong(const Tensor& t, int dim, bool keepDim, math::Reduction op) {
  const char* name = reductionName(op);
  const int dims = t.dim();
  NN_CHECK(dim >= -dims && dim < dims, "nn.Tensor." << name << ": dimension " << dim
                                                    << " out of range for a tensor of sizes " << t.shapeString()
                                                    << " (expected " << -dims << " to " << dims - 1 << ")");
  const int d = dim < 0 ? dim + dims : dim;
  const int64_t size = t.size(d);
  NN_CHECK(size > 0 || op == math::Reduction::kSum || op == math::Reduction::kMean,
           "nn.Tensor." << name << ": dimension " << d << " of sizes " << t.shapeString()
                        << " is empty, and an empty dimension has no " << name);
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> sizes;
  for (int k = 0; k < dims; ++k) {
    if (k < d) outer *= t.size(k);
    if (k > d) inner *= t.size(k);
    if (k != d || keepDim) sizes.push_back(k == d ? 1 : t.size(k));
  }
  Tensor result = Tensor::empty(sizes, t.device());
  if (result.numel() == 0) return result;
  const Tensor source = t.contiguous();
  kernelsOf(t.device()).tensor.reduce(t.device(), result.rawData(), source.rawData(), outer, size, inner, op);
  return result;
}

Tensor compareWith(const Tensor& t, const Tensor* other, float value, math::Comparison op) {
  if (other != nullptr) {
    NN_CHECK(other->sizes() == t.sizes(), "nn.Tensor." << comparisonName(op) << ": expected sizes " << t.shapeString()
                                                       << ", got " << other->shapeString());
    NN_CHECK(other->device() == t.device(), "nn.Tensor." << comparisonName(op) << ": expected a tensor on "
                                                         << t.device().str() << ", got one on "
                                                         << other->device().str());
  }
  Tensor result = Tensor::empty(t.sizes(), t.device());
  if (result.numel() == 0) return result;
  const Tensor x = t.contiguous();
  const Tensor y = other != nullptr ? other->contiguous() : Tensor();
  kernelsOf(t.device())
      .tensor.compare(t.device(), result.rawData(), x.rawData(), other != nullptr ? y.rawData() : nullptr, value,
                      t.numel(), op);
  return result;
}

}  // namespace

Tensor Tensor::rand(const std::vector<int64_t>& sizes, Generator& generator, const Device& device) {
  Tensor t = empty(sizes, device);
  t.uniform_(generator, 0.f, 1.f);
  return t;
}

Tensor Tensor::randn(const std::vector<int64_t>& sizes, Generator& generator, const Device& device) {
  Tensor t = empty(sizes, device);
  t.normal_(generator, 0.f, 1.f);
  return t;
}

double Tensor::mean() const { return sum() / static_cast<double>(numel()); }

float Tensor::item() const {
  NN_CHECK(numel() == 1, "nn.Tensor.item: expected a tensor of one element, got sizes " << shapeString());
  return toVector()[0];
}

Tensor Tensor::sum(int dim, bool keepDim) const { return reduceAlong(*this, dim, keepDim, math::Reduction::kSum); }
Tensor Tensor::mean(int dim, bool keepDim) const { return reduceAlong(*this, dim, keepDim, math::Reduction::kMean); }
Tensor Tensor::max(int dim, bool keepDim) const { return reduceAlong(*this, dim, keepDim, math::Reduction::kMax); }
Tensor Tensor::argmax(int dim, bool keepDim) const {
  return reduceAlong(*this, dim, keepDim, math::Reduction::kArgmax);
}

Tensor Tensor::eq(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kEq); }
Tensor Tensor::ne(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kNe); }
Tensor Tensor::lt(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kLt); }
Tensor Tensor::le(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kLe); }
Tensor Tensor::gt(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kGt); }
Tensor Tensor::ge(const Tensor& other) const { return compareWith(*this, &other, 0.f, math::Comparison::kGe); }
Tensor Tensor::eq(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kEq); }
Tensor Tensor::ne(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kNe); }
Tensor Tensor::lt(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kLt); }
Tensor Tensor::le(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kLe); }
Tensor Tensor::gt(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kGt); }
Tensor Tensor::ge(float value) const { return compareWith(*this, nullptr, value, math::Comparison::kGe); }

}  // namespace nn

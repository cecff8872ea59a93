// The methods of nn::Tensor, nn::Storage and nn::Device (declared in nn/tensor) that reach a
// device's backend: a storage's memory, copies within and between devices, fills, arithmetic,
// reductions, comparisons and random values, each through backendOf/kernelsOf of the tensor's
// device; and the check that a device exists. The views and shapes are nn/tensor/Tensor.cpp's.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <type_traits>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/math/Half.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"

namespace nn {

namespace {

std::atomic<int64_t> gStorageAllocations{0};

// The innermost StorageLimit alive on this thread, or none, and the last serial number given.
thread_local StorageLimit* tStorageLimit = nullptr;
thread_local uint64_t tStorageLimitSerials = 0;

// The bytes a storage of `count` elements of `dtype` takes, counting at least 4 (an empty
// storage still allocates): count is at most kMaxElements, so that the product does not overflow.
size_t storageBytes(int64_t count, DType dtype) {
  return static_cast<size_t>(std::max<int64_t>(count * elementSize(dtype), 4));
}

// The tensor as its backend sees it (nn/backend/TensorKernels.h).
StridedView stridedView(const Tensor& t) {
  StridedView v;
  for (int d = 0; d < t.dim(); ++d)
    NN_CHECK(v.push(t.size(d), t.stride(d)), "nn.Tensor: a strided tensor on "
                                                 << t.device().str() << " takes at most " << StridedView::kMaxDims
                                                 << " dimensions that cannot be merged, got sizes " << t.shapeString()
                                                 << " with strides " << nn::shapeString(t.strides()));
  return v;
}

// Note [Overlapping copies]
// A copy between two views of one storage whose elements overlap (copy_ between such views,
// copyAlong within one tensor) copies as if the source were read whole before the first write,
// on every device: the source goes through a contiguous copy of its own first. The backends
// then never see overlapping ranges, for which a CUDA copy or kernel is undefined, except a view
// copied onto itself, which changes nothing on any of them. Such copies are rare (no training
// step makes one), so the staging copy may allocate.

// The storage elements [first, last] that a non-empty view reaches (strides are at least 0).
struct Reach {
  int64_t first, last;
};
Reach reachOf(const Tensor& t) {
  int64_t last = t.storageOffset();
  for (int d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);  // inside the storage (checkView)
  return {t.storageOffset(), last};
}
bool reachesMeet(const Reach& a, const Reach& b) { return a.first <= b.last && b.first <= a.last; }

// True where `dst` and `src`, both non-empty, are views of one storage whose reaches meet and
// are not the same view (interleaved views that share no element are staged too: rare, and
// correct either way).
bool overlapping(const Tensor& dst, const Tensor& src) {
  if (dst.storage() != src.storage() || !reachesMeet(reachOf(dst), reachOf(src))) return false;
  return dst.storageOffset() != src.storageOffset() || dst.sizes() != src.sizes() || dst.strides() != src.strides();
}

}  // namespace

int64_t storageAllocationCount() { return gStorageAllocations.load(); }

Storage::Storage(int64_t count, const Device& device, DType dtype) : count_(count), dtype_(dtype), device_(device) {
  int64_t totalBytes = 0;
  NN_CHECK(count >= 0 && count <= kMaxElements && mulInto(count, elementSize(dtype), totalBytes),
           "nn.Storage: expected a size from 0 to " << kMaxElements << " elements of " << dtypeName(dtype) << ", got "
                                                    << count);
  checkDeviceExists(device);
  gStorageAllocations.fetch_add(1);
  const size_t bytes = storageBytes(count, dtype);
  if (StorageLimit* limit = tStorageLimit) {
    const auto wanted = static_cast<int64_t>(bytes);
    NN_CHECK(wanted <= limit->bytesLeft(), "nn.Storage: " << wanted << " bytes on " << device.str()
                                                          << " would exceed the limit of " << limit->bytesLeft()
                                                          << " bytes left to " << limit->purpose());
    limit->bytesLeft_ -= wanted;
    limitSerial_ = limit->serial_;
  }
  data_ = backendOf(device).allocate(device, bytes);
}

void Storage::throwNotFloat32() const {
  throw Error(std::string("nn.Storage.data: expected a float32 storage, got a ") + dtypeName(dtype_) + " one of " +
              std::to_string(count_) + " elements on " + device_.str() + " (bytes() gives its elements' bits)");
}

StorageLimit::StorageLimit(int64_t bytes, std::string purpose)
    : bytesLeft_(bytes), purpose_(std::move(purpose)), outer_(tStorageLimit), serial_(++tStorageLimitSerials) {
  tStorageLimit = this;
}

StorageLimit::~StorageLimit() { tStorageLimit = outer_; }

Storage::~Storage() {
  // Temporaries (the values a parameter is initialised from) give their bytes back.
  if (limitSerial_ != 0 && tStorageLimit != nullptr && tStorageLimit->serial_ == limitSerial_)
    tStorageLimit->bytesLeft_ += static_cast<int64_t>(storageBytes(count_, dtype_));
  // The backend exists: this storage was allocated from it.
  findBackend(device_.type())->deallocate(device_, data_);
}

void copyAlong(const Tensor& dst, int64_t dstStart, const Tensor& src, int64_t srcStart, int dim, int64_t length) {
  bool same = dst.dim() == src.dim() && dim >= 0 && dim < dst.dim();
  for (int d = 0; same && d < dst.dim(); ++d) same = d == dim || dst.size(d) == src.size(d);
  NN_CHECK(same, "nn::copyAlong: expected tensors of equal sizes but along dimension "
                     << dim << ", got " << dst.shapeString() << " and " << src.shapeString());
  NN_CHECK(dst.isContiguous() && src.isContiguous(), "nn::copyAlong: expected contiguous tensors");
  NN_CHECK(
      dst.dtype() == DType::Float32 && src.dtype() == DType::Float32,
      "nn::copyAlong: expected float32 tensors, got " << dtypeName(dst.dtype()) << " and " << dtypeName(src.dtype()));
  NN_CHECK(rangeWithin(srcStart, length, src.size(dim)) && rangeWithin(dstStart, length, dst.size(dim)),
           "nn::copyAlong: indices " << rangeString(srcStart, length) << " of " << src.shapeString() << " to "
                                     << rangeString(dstStart, length) << " of " << dst.shapeString()
                                     << " along dimension " << dim << " are out of bounds");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= dst.size(d);
  for (int d = dim + 1; d < dst.dim(); ++d) inner *= dst.size(d);
  const int64_t run = length * inner;
  if (outer == 0 || run == 0) return;
  const int64_t dstRow = dst.size(dim) * inner, srcRow = src.size(dim) * inner;
  if (dst.storage() == src.storage()) {  // Note [Overlapping copies]
    const int64_t to = dst.storageOffset() + dstStart * inner, from = src.storageOffset() + srcStart * inner;
    const Reach written{to, to + (outer - 1) * dstRow + run - 1}, read{from, from + (outer - 1) * srcRow + run - 1};
    if (reachesMeet(written, read) && (to != from || dstRow != srcRow)) {
      copyAlong(dst, dstStart, src.narrow(dim, srcStart, length).clone(), 0, dim, length);
      return;
    }
  }
  float* to = dst.rawData() + dstStart * inner;
  const float* from = src.rawData() + srcStart * inner;
  Backend& dstBackend = backendOf(dst.device());
  Backend& backend = dstBackend.isHost() ? backendOf(src.device()) : dstBackend;
  // `outer` runs of `run` floats, a row apart on each side: one strided copy where the
  // backend takes one, else a contiguous copy per run.
  if (outer == 1 || backend.copiesStrided(dst.device(), src.device())) {
    StridedView dstView = StridedView::contiguous(outer * run), srcView = dstView;
    if (outer > 1) {
      dstView.dims = srcView.dims = 2;
      dstView.sizes[0] = srcView.sizes[0] = outer;
      dstView.sizes[1] = srcView.sizes[1] = run;
      dstView.strides[0] = dstRow;
      srcView.strides[0] = srcRow;
      dstView.strides[1] = srcView.strides[1] = 1;
    }
    backend.copy(to, dst.device(), dstView, from, src.device(), srcView, outer * run);
    return;
  }
  const StridedView runView = StridedView::contiguous(run);
  for (int64_t o = 0; o < outer; ++o)
    backend.copy(to + o * dstRow, dst.device(), runView, from + o * srcRow, src.device(), runView, run);
}

Tensor Tensor::zeros(const std::vector<int64_t>& sizes, const Device& device, DType dtype) {
  return full(sizes, 0.f, device, dtype);
}

Tensor Tensor::full(const std::vector<int64_t>& sizes, float value, const Device& device, DType dtype) {
  Tensor t = empty(sizes, device, dtype);
  t.fill_(value);
  return t;
}

Tensor Tensor::fromVector(const std::vector<int64_t>& sizes, const std::vector<float>& values, const Device& device) {
  NN_CHECK(product(sizes) == static_cast<int64_t>(values.size()),
           "nn.Tensor.fromVector: sizes " << nn::shapeString(sizes) << " hold " << product(sizes) << " values, got "
                                          << values.size());
  Tensor host = empty(sizes);
  std::copy(values.begin(), values.end(), host.data());
  return host.to(device);
}

Tensor Tensor::contiguous() const { return isContiguous() ? *this : clone(); }

void joinAlong(const std::vector<const Tensor*>& parts, int dim, const Device& device, Tensor& into,
               std::vector<int64_t>& sizes, FunctionRef<std::string(size_t)> partName) {
  NN_CHECK(!parts.empty(), "nn::joinAlong: expected at least one part to join, got none");
  const Tensor& first = *parts[0];
  NN_CHECK(dim >= 0 && first.dim() > dim,
           partName(0) << ": cannot join along dimension " << dim << " parts of size " << first.shapeString());
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = *parts[i];
    bool same = p.dim() == first.dim();
    for (int d = 0; same && d < p.dim(); ++d) same = d == dim || p.size(d) == first.size(d);
    NN_CHECK(same, partName(i) << " has size " << p.shapeString() << ", which does not match " << first.shapeString()
                               << " except along dimension " << dim);
    NN_CHECK(addInto(total, p.size(dim), total),
             partName(i) << ": the parts' sizes along dimension " << dim << " add up beyond 64-bit integers");
  }
  sizes = first.sizes();
  sizes[dim] = total;
  into.resize_(sizes, device);
  int64_t start = 0;
  for (const Tensor* p : parts) {
    copyAlong(into, start, p->contiguous(), 0, dim, p->size(dim));
    start += p->size(dim);
  }
}

const Tensor& contiguousIn(const Tensor& t, Tensor& buffer) {
  if (t.isContiguous()) return t;
  buffer.resizeAs_(t);
  buffer.copy_(t);
  return buffer;
}

Tensor Tensor::clone() const {
  Tensor t = empty(sizes(), device(), dtype());
  t.copy_(*this);
  return t;
}

Tensor Tensor::to(const Device& d) const {
  if (d == device()) return *this;
  Tensor t = empty(sizes(), d, dtype());
  t.copy_(*this);
  return t;
}

Tensor Tensor::to(DType type) const {
  if (type == dtype()) return *this;
  Tensor t = empty(sizes(), device(), type);
  t.copy_(*this);
  return t;
}

std::vector<float> Tensor::toVector() const {
  if (dtype() != DType::Float32) return to(DType::Float32).toVector();  // widening is exact
  Tensor host = device().isCpu() ? contiguous() : to(Device());
  return std::vector<float>(host.rawData(), host.rawData() + host.numel());
}

Tensor& Tensor::copy_(const Tensor& src) {
  NN_CHECK(src.numel() == numel(), "nn.Tensor.copy_: expected a source of " << numel() << " elements (sizes "
                                                                            << shapeString() << "), got " << src.numel()
                                                                            << " (sizes " << src.shapeString() << ")");
  if (numel() == 0) return *this;
  if (overlapping(*this, src)) return copy_(src.clone());  // Note [Overlapping copies]
  if (dtype() != DType::Float32 || src.dtype() != DType::Float32) {
    // Note [Element types]: on one device the backend converts, strided on both sides.
    if (device() == src.device()) {
      kernelsOf(device()).tensor.convert(device(), rawBytes(), dtype(), stridedView(*this), src.rawBytes(), src.dtype(),
                                         stridedView(src), numel());
      return *this;
    }
    // Between devices: a contiguous tensor of this type on src's device, whose bytes move to
    // this tensor, or through a contiguous one on this device where this one is strided.
    const Tensor moving = src.dtype() == dtype() ? src.contiguous() : src.to(dtype());
    Backend& dstBackend = backendOf(device());
    Backend& backend = dstBackend.isHost() ? backendOf(src.device()) : dstBackend;
    const auto bytes = static_cast<size_t>(numel() * elementSize(dtype()));  // numel() <= kMaxElements
    if (isContiguous()) {
      backend.copyBytes(rawBytes(), device(), moving.rawBytes(), src.device(), bytes);
      return *this;
    }
    Tensor landed = empty(sizes(), device(), dtype());
    backend.copyBytes(landed.rawBytes(), device(), moving.rawBytes(), src.device(), bytes);
    return copy_(landed);
  }
  // Between the host and another device type, that type's backend copies.
  Backend& dstBackend = backendOf(device());
  Backend& backend = dstBackend.isHost() ? backendOf(src.device()) : dstBackend;
  if ((isContiguous() && src.isContiguous()) || backend.copiesStrided(device(), src.device())) {
    backend.copy(rawData(), device(), stridedView(*this), src.rawData(), src.device(), stridedView(src), numel());
    return *this;
  }
  // This backend moves contiguous blocks between these devices: a strided side goes through a
  // contiguous copy on its own device.
  if (!src.isContiguous()) return copy_(src.contiguous());
  Tensor staged = empty(sizes(), device());
  staged.copy_(src);
  return copy_(staged);
}

Tensor& Tensor::fill_(float value) {
  if (numel() == 0) return *this;
  if (dtype() != DType::Float32) {
    // One float32 element seen at every index (strides 0), converted in by copy_.
    const Tensor one = full({1}, value, device());
    Tensor everywhere;
    everywhere.set_(one.storage(), 0, sizes(), std::vector<int64_t>(sizes().size(), 0));
    return copy_(everywhere);
  }
  kernelsOf(device()).tensor.fill(device(), rawData(), stridedView(*this), numel(), value);
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, float alpha) {
  checkElementwise("add_", other);
  kernelsOf(device()).tensor.addScaled(device(), rawData(), rawData(), other.rawData(), numel(), alpha);
  return *this;
}

Tensor& Tensor::add_(const Tensor& a, const Tensor& b) {
  a.checkElementwise("add_", b);
  checkFloat32("add_");
  resize_(a.sizes(), a.device());
  kernelsOf(device()).tensor.addScaled(device(), rawData(), a.rawData(), b.rawData(), numel(), 1.f);
  return *this;
}

Tensor& Tensor::mul_(float value) {
  checkFloat32("mul_");
  NN_CHECK(isContiguous(), "nn.Tensor.mul_: needs a contiguous tensor, got sizes " << shapeString() << " with strides "
                                                                                   << nn::shapeString(strides()));
  kernelsOf(device()).tensor.scale(device(), rawData(), numel(), value);
  return *this;
}

Tensor& Tensor::cmul_(const Tensor& other) {
  checkElementwise("cmul_", other);
  kernelsOf(device()).tensor.multiply(device(), rawData(), rawData(), other.rawData(), numel());
  return *this;
}

Tensor& Tensor::cmul_(const Tensor& a, const Tensor& b) {
  a.checkElementwise("cmul_", b);
  checkFloat32("cmul_");
  resize_(a.sizes(), a.device());
  kernelsOf(device()).tensor.multiply(device(), rawData(), a.rawData(), b.rawData(), numel());
  return *this;
}

Tensor& Tensor::cdiv_(const Tensor& other) {
  checkElementwise("cdiv_", other);
  kernelsOf(device()).tensor.divide(device(), rawData(), other.rawData(), numel());
  return *this;
}

Tensor& Tensor::uniform_(Generator& generator, float low, float high) {
  Tensor host = empty(sizes());
  float* d = host.rawData();
  for (int64_t i = 0, n = numel(); i < n; ++i) d[i] = generator.uniform(low, high);
  return copy_(host);
}

Tensor& Tensor::normal_(Generator& generator, float mean, float stddev) {
  Tensor host = empty(sizes());
  float* d = host.rawData();
  for (int64_t i = 0, n = numel(); i < n; ++i) d[i] = generator.normal(mean, stddev);
  return copy_(host);
}

double Tensor::sum() const {
  const std::vector<float> v = toVector();
  double s = 0;
  for (float x : v) s += x;
  return s;
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  out << "nn.Tensor " << t.shapeString();
  if (t.dtype() != DType::Float32) out << " " << dtypeName(t.dtype());
  out << " on " << t.device().str() << " {";
  const std::vector<float> values = t.numel() > 0 ? t.toVector() : std::vector<float>();
  const size_t shown = values.size() > 8 ? 6 : values.size();
  for (size_t i = 0; i < shown; ++i) out << (i ? ", " : "") << values[i];
  if (shown < values.size()) out << ", ..., " << values.back();
  return out << "}";
}

// The helpers for training and evaluation code: random tensors, item(), reductions along a
// dimension and element-wise comparisons. Each makes a new tensor; the formulas are
// nn/math/TensorOps.h's, the loops the device's TensorKernels.

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
    case math::Reduction::kSumSquares:
      return "sumSquares";
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
  checkFloat32Tensor(t.dtype(), name);
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
  checkFloat32Tensor(t.dtype(), comparisonName(op));
  if (other != nullptr) {
    checkFloat32Tensor(other->dtype(), comparisonName(op));
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

Device Device::parse(const std::string& text) {
  std::string kind = text;
  int index = 0;
  const auto colon = text.find(':');
  if (colon != std::string::npos) {
    kind = text.substr(0, colon);
    const std::string digits = text.substr(colon + 1);
    bool ok = !digits.empty() && digits.size() <= 6;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    NN_CHECK(ok, "nn.Device: expected a device like cpu:0 or cuda:1, got '" << text << "'");
    index = std::stoi(digits);
  }
  NN_CHECK(kind == "cpu" || kind == "cuda", "nn.Device: expected a device like cpu:0 or cuda:1, got '" << text << "'");
  Device device(kind == "cpu" ? DeviceType::CPU : DeviceType::CUDA, index);
  checkDeviceExists(device);
  return device;
}

void checkDeviceExists(const Device& device) {
  Backend& backend = backendOf(device);
  const int count = backend.deviceCount();
  NN_CHECK(count > 0, "nn.Device: no " << deviceTypeName(device.type()) << " device available for " << device.str()
                                       << ": " << backend.unavailableReason());
  NN_CHECK(device.index() < count, "nn.Device: " << device.str() << " does not exist: there are " << count << " "
                                                 << deviceTypeName(device.type()) << " devices, "
                                                 << Device(device.type(), 0).str() << " to "
                                                 << Device(device.type(), count - 1).str());
}

}  // namespace nn

// nn::Tensor: what a tensor is, on any device: its element type, sizes and strides, the views
// made from them (narrow, select, view, transpose, set_) and their checks, resize_ and element
// access on the host. What a tensor does on its device (its storage's memory, copies, fills,
// arithmetic, reductions, random values) reaches the device's backend and is defined there,
// in nn/backend/TensorMethods.cpp, above the kernel tables it calls.
#include "nn/tensor/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nn/math/Half.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Note [Element types]
// A tensor's element type is its storage's: float32, bfloat16 or float16 (nn/tensor/DType.h), the
// 16-bit ones as their bits (uint16_t, nn/math/Half.h). Offsets, strides and sizes count
// elements of that type, so that views (narrow, select, view, transpose, set_) and resize_ are
// the same code for every type; a storage's bytes are its count times the element's size.
// Copies convert (copy_, to(DType), clone, toVector): on one device in the backend's convert
// kernel, between devices as bytes of the destination's type, converted on the source's device.
// Everything that computes (the arithmetic methods, reductions, comparisons, every module and
// kernel) computes in float32 and refuses another type with an nn::Error naming both: the
// methods by name, modules where they are dispatched (Module::checkElementType), and any other
// caller at rawData()/data(), which give float pointers of float32 tensors only.

// Sizes of at least 0 that hold at most kMaxElements elements, counting each size of 0 as 1
// (as the strides do), so that neither the element count nor a stride can overflow.
void checkSizes(const int64_t* sizes, size_t dims, const char* op) {
  int64_t extent = 0;
  if (extentOf(sizes, dims, extent)) return;
  bool negative = false;
  for (size_t i = 0; i < dims; ++i) negative = negative || sizes[i] < 0;
  NN_CHECK(!negative,
           "nn.Tensor." << op << ": expected sizes of at least 0, got " << nn::shapeString({sizes, sizes + dims}));
  NN_CHECK(false, "nn.Tensor." << op << ": sizes " << nn::shapeString({sizes, sizes + dims}) << " hold more than "
                               << kMaxElements << " elements");
}

// What every view of a storage satisfies, checked where one is made (makeView, set_): sizes as
// checkSizes wants them, strides and offset of at least 0, and, where the view holds an element,
// its last element inside the storage, all computed without overflow. A view made from such a
// view (narrow, select, transpose, view) lies inside too, and no kernel stepping through it
// overflows. An empty view may point anywhere from the storage's start on.
void checkView(const Storage* storage, int64_t offset, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides, const char* op) {
  NN_CHECK(strides.size() == sizes.size(), "nn.Tensor." << op << ": expected a stride for each of the sizes "
                                                        << nn::shapeString(sizes) << ", got " << strides.size()
                                                        << " strides");
  checkSizes(sizes.data(), sizes.size(), op);
  bool empty = false, strided = true, inside = true;
  int64_t last = offset;  // the last element the view reaches
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t step = 0;
    strided = strided && strides[d] >= 0;
    if (sizes[d] == 0)
      empty = true;
    else
      inside = inside && mulInto(sizes[d] - 1, strides[d], step) && addInto(last, step, last);
  }
  const int64_t count = storage != nullptr ? storage->count() : 0;
  NN_CHECK(offset >= 0 && strided && (empty || (inside && last < count)),
           "nn.Tensor." << op << ": sizes " << nn::shapeString(sizes) << " with strides " << nn::shapeString(strides)
                        << " at offset " << offset << " reach outside a storage of " << count << " elements");
}

}  // namespace

void checkFloat32Tensor(DType dtype, const char* op) {
  NN_CHECK(dtype == DType::Float32, "nn.Tensor." << op << ": expected a float32 tensor, got a " << dtypeName(dtype)
                                                 << " one (this operation computes in float32; convert with "
                                                    "to(nn::DType::Float32))");
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
    NN_CHECK(mulInto(strides[d + 1], std::max<int64_t>(sizes[d + 1], 1), strides[d]),
             "nn::contiguousStrides: sizes " << nn::shapeString(sizes) << " give strides beyond 64-bit integers");
  return strides;
}

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    if (s == 0) return 0;
  for (int64_t s : sizes)
    NN_CHECK(mulInto(n, s, n), "nn::product: sizes " << nn::shapeString(sizes) << " hold more than 2^63 elements");
  return n;
}

Tensor::Tensor() : impl_(std::make_shared<TensorImpl>()) { impl_->storage = nullptr; }

Tensor Tensor::empty(const std::vector<int64_t>& sizes, const Device& device, DType dtype) {
  Tensor t;
  t.impl_->dtype = dtype;
  t.resize_(sizes, device);
  return t;
}

int64_t Tensor::size(int d) const {
  NN_CHECK(d >= 0 && d < dim(),
           "nn.Tensor.size: dimension " << d << " out of range for a tensor of sizes " << shapeString());
  return impl_->sizes[d];
}

int64_t Tensor::stride(int d) const {
  NN_CHECK(d >= 0 && d < dim(),
           "nn.Tensor.stride: dimension " << d << " out of range for a tensor of sizes " << shapeString());
  return impl_->strides[d];
}

int64_t Tensor::numel() const { return product(impl_->sizes); }

Device Tensor::device() const { return impl_->storage ? impl_->storage->device() : Device(); }

bool Tensor::isContiguous() const {
  int64_t expected = 1;
  for (int d = dim() - 1; d >= 0; --d) {
    if (impl_->sizes[d] == 1) continue;
    if (impl_->strides[d] != expected) return false;
    expected *= impl_->sizes[d];
  }
  return true;
}

std::string Tensor::shapeString() const { return nn::shapeString(impl_->sizes); }

void* Tensor::rawBytes() const {
  return impl_->storage ? static_cast<char*>(impl_->storage->bytes()) + impl_->offset * elementSize(impl_->dtype)
                        : nullptr;
}

float* Tensor::rawData() const {
  if (impl_->dtype != DType::Float32) checkFloat32Tensor(impl_->dtype, "rawData");
  return static_cast<float*>(rawBytes());
}

float* Tensor::data() const {
  NN_CHECK(device().isCpu(), "nn.Tensor.data: the tensor lives on " << device().str() << "; data() is for CPU tensors");
  if (impl_->dtype != DType::Float32) checkFloat32Tensor(impl_->dtype, "data");
  return static_cast<float*>(rawBytes());
}

template <typename T>
T* Tensor::rawData() const {
  static_assert(std::is_same<T, float>::value || std::is_same<T, uint16_t>::value,
                "a tensor's elements are float (float32) or uint16_t (bfloat16, float16)");
  const bool matches = std::is_same<T, float>::value ? impl_->dtype == DType::Float32 : impl_->dtype != DType::Float32;
  NN_CHECK(matches, "nn.Tensor.rawData: expected a "
                        << (std::is_same<T, float>::value ? "float32" : "bfloat16 or float16") << " tensor, got a "
                        << dtypeName(impl_->dtype) << " one");
  return static_cast<T*>(rawBytes());
}

template <typename T>
T* Tensor::data() const {
  NN_CHECK(device().isCpu(), "nn.Tensor.data: the tensor lives on " << device().str() << "; data() is for CPU tensors");
  return rawData<T>();
}

template float* Tensor::rawData<float>() const;
template uint16_t* Tensor::rawData<uint16_t>() const;
template float* Tensor::data<float>() const;
template uint16_t* Tensor::data<uint16_t>() const;

Tensor Tensor::makeView(int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                        const char* op) const {
  checkView(impl_->storage.get(), offset, sizes, strides, op);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->dtype = impl_->dtype;
  impl->offset = offset;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  return Tensor(std::move(impl));
}

int64_t Tensor::offsetAlong(int d, int64_t index, const char* op) const {
  int64_t step = 0, offset = 0;
  NN_CHECK(mulInto(index, impl_->strides[d], step) && addInto(impl_->offset, step, offset),
           "nn.Tensor." << op << ": index " << index << " along dimension " << d << " (stride " << impl_->strides[d]
                        << ") at offset " << impl_->offset << " gives an offset beyond 64-bit integers");
  return offset;
}

Tensor Tensor::narrow(int d, int64_t start, int64_t length) const {
  NN_CHECK(d >= 0 && d < dim(), "nn.Tensor.narrow: dimension " << d << " out of range for sizes " << shapeString());
  NN_CHECK(rangeWithin(start, length, impl_->sizes[d]),
           "nn.Tensor.narrow: range " << rangeString(start, length) << " out of bounds for dimension " << d
                                      << " of sizes " << shapeString());
  auto sizes = impl_->sizes;
  sizes[d] = length;
  return makeView(offsetAlong(d, start, "narrow"), sizes, impl_->strides, "narrow");
}

Tensor Tensor::select(int d, int64_t index) const {
  NN_CHECK(d >= 0 && d < dim(), "nn.Tensor.select: dimension " << d << " out of range for sizes " << shapeString());
  NN_CHECK(rangeWithin(index, 1, impl_->sizes[d]), "nn.Tensor.select: index "
                                                       << index << " out of bounds for dimension " << d << " of sizes "
                                                       << shapeString());
  auto sizes = impl_->sizes;
  auto strides = impl_->strides;
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return makeView(offsetAlong(d, index, "select"), sizes, strides, "select");
}

Tensor Tensor::view(std::vector<int64_t> sizes) const {
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      NN_CHECK(inferred < 0, "nn.Tensor.view: at most one size may be -1, got " << nn::shapeString(sizes));
      inferred = static_cast<int>(i);
    } else {
      NN_CHECK(sizes[i] >= 0 && mulInto(known, sizes[i], known) && known <= kMaxElements,
               "nn.Tensor.view: expected sizes of at least 0 (or -1) that hold at most "
                   << kMaxElements << " elements, got " << nn::shapeString(sizes));
    }
  }
  if (inferred >= 0) {
    NN_CHECK(known > 0 && numel() % known == 0, "nn.Tensor.view: cannot view " << shapeString() << " (" << numel()
                                                                               << " elements) as "
                                                                               << nn::shapeString(sizes));
    sizes[inferred] = numel() / known;
  }
  NN_CHECK(known == numel() || inferred >= 0, "nn.Tensor.view: cannot view " << shapeString() << " (" << numel()
                                                                             << " elements) as "
                                                                             << nn::shapeString(sizes));
  NN_CHECK(isContiguous(), "nn.Tensor.view: needs a contiguous tensor, got sizes " << shapeString() << " with strides "
                                                                                   << nn::shapeString(strides()));
  // Sizes of 0 hide the others from the count: checkView bounds their extent too.
  checkSizes(sizes.data(), sizes.size(), "view");
  return makeView(impl_->offset, sizes, contiguousStrides(sizes), "view");
}

Tensor Tensor::transpose(int d0, int d1) const {
  NN_CHECK(d0 >= 0 && d0 < dim() && d1 >= 0 && d1 < dim(),
           "nn.Tensor.transpose: dimensions " << d0 << ", " << d1 << " out of range for sizes " << shapeString());
  auto sizes = impl_->sizes;
  auto strides = impl_->strides;
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return makeView(impl_->offset, sizes, strides, "transpose");
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  NN_CHECK(static_cast<int>(index.size()) == dim(),
           "nn.Tensor.at: expected " << dim() << " indices, got " << index.size());
  int64_t offset = impl_->offset;
  int d = 0;
  for (int64_t i : index) {
    NN_CHECK(i >= 0 && i < impl_->sizes[d],
             "nn.Tensor.at: index " << i << " out of bounds for dimension " << d << " of sizes " << shapeString());
    offset += i * impl_->strides[d++];
  }
  NN_CHECK(device().isCpu(), "nn.Tensor.at: the tensor lives on " << device().str());
  const void* bytes = impl_->storage->bytes();
  switch (dtype()) {
    case DType::BFloat16:
      return math::bfloat16ToFloat(static_cast<const uint16_t*>(bytes)[offset]);
    case DType::Float16:
      return math::halfToFloat(static_cast<const uint16_t*>(bytes)[offset]);
    case DType::Float32:
      break;
  }
  return static_cast<const float*>(bytes)[offset];
}

Tensor& Tensor::resize_(const std::vector<int64_t>& sizes) { return resizeImpl(sizes.data(), sizes.size(), device()); }

Tensor& Tensor::resize_(const std::vector<int64_t>& sizes, const Device& d) {
  return resizeImpl(sizes.data(), sizes.size(), d);
}

Tensor& Tensor::resize_(std::initializer_list<int64_t> sizes, const Device& d) {
  return resizeImpl(sizes.begin(), sizes.size(), d);
}

Tensor& Tensor::resizeImpl(const int64_t* sizes, size_t dims, const Device& d) {
  checkSizes(sizes, dims, "resize_");
  int64_t needed = 1;
  for (size_t i = 0; i < dims; ++i) needed *= sizes[i];  // at most the extent: no overflow
  const bool fits = impl_->storage && impl_->storage->device() == d && impl_->storage->dtype() == impl_->dtype &&
                    rangeWithin(impl_->offset, needed, impl_->storage->count());
  if (!fits) {
    impl_->storage = std::make_shared<Storage>(needed, d, impl_->dtype);
    impl_->offset = 0;
  }
  impl_->sizes.assign(sizes, sizes + dims);
  setContiguousStrides();
  return *this;
}

void Tensor::setContiguousStrides() {
  // In place: the strides vector keeps its capacity, so a steady step allocates nothing.
  const size_t dims = impl_->sizes.size();
  impl_->strides.resize(dims);
  int64_t stride = 1;
  for (size_t i = dims; i-- > 0;) {
    impl_->strides[i] = stride;
    stride *= std::max<int64_t>(impl_->sizes[i], 1);
  }
}

bool Tensor::hasSizes(std::initializer_list<int64_t> sizes) const {
  return std::equal(sizes.begin(), sizes.end(), impl_->sizes.begin(), impl_->sizes.end());
}

Tensor& Tensor::set_(const Tensor& src) {
  if (src.impl_ == impl_) return *this;
  impl_->storage = src.impl_->storage;
  impl_->dtype = src.impl_->dtype;
  impl_->offset = src.impl_->offset;
  impl_->sizes = src.impl_->sizes;
  impl_->strides = src.impl_->strides;
  return *this;
}

Tensor& Tensor::set_(const std::shared_ptr<Storage>& storage, int64_t offset, const std::vector<int64_t>& sizes) {
  checkSizes(sizes.data(), sizes.size(), "set_");
  // Contiguous: the view reaches its element count from the offset.
  const int64_t count = storage != nullptr ? storage->count() : 0, n = product(sizes);
  NN_CHECK(offset >= 0 && (n == 0 || rangeWithin(offset, n, count)),
           "nn.Tensor.set_: sizes " << nn::shapeString(sizes) << " at offset " << offset
                                    << " reach outside a storage of " << count << " elements");
  impl_->storage = storage;
  if (storage != nullptr) impl_->dtype = storage->dtype();
  impl_->offset = offset;
  impl_->sizes = sizes;
  setContiguousStrides();
  return *this;
}

Tensor& Tensor::set_(const std::shared_ptr<Storage>& storage, int64_t offset, const std::vector<int64_t>& sizes,
                     const std::vector<int64_t>& strides) {
  checkView(storage.get(), offset, sizes, strides, "set_");
  impl_->storage = storage;
  if (storage != nullptr) impl_->dtype = storage->dtype();
  impl_->offset = offset;
  impl_->sizes = sizes;
  impl_->strides = strides;
  return *this;
}

void Tensor::checkFloat32(const char* op) const { checkFloat32Tensor(dtype(), op); }

void Tensor::checkElementwise(const char* op, const Tensor& other) const {
  NN_CHECK(dtype() == DType::Float32 && other.dtype() == DType::Float32,
           "nn.Tensor." << op << ": expected float32 tensors, got " << dtypeName(dtype()) << " and "
                        << dtypeName(other.dtype()) << " (this operation computes in float32)");
  NN_CHECK(sizes() == other.sizes(),
           "nn.Tensor." << op << ": expected sizes " << shapeString() << ", got " << other.shapeString());
  NN_CHECK(device() == other.device(),
           "nn.Tensor." << op << ": expected a tensor on " << device().str() << ", got " << other.device().str());
  NN_CHECK(isContiguous() && other.isContiguous(), "nn.Tensor." << op << ": needs contiguous tensors, got strides "
                                                                << nn::shapeString(strides()) << " and "
                                                                << nn::shapeString(other.strides()));
}

}  // namespace nn

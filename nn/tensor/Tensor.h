// nn::Tensor: a strided view of a Storage that lives on one Device, of one element type
// (nn/tensor/DType.h): float32, in which every module and arithmetic method computes, or bfloat16
// and float16, which views, copies and conversions take (Note [Element types] in Tensor.cpp).
//
// A Tensor is a handle: copies of it share one TensorImpl (storage, offset, sizes,
// strides), as in libtorch, so `Tensor w = layer->weight; w.set_(...)` rebinds the
// layer's weight too. narrow/select/view/transpose make new handles that share storage.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "nn/tensor/Checked.h"
#include "nn/tensor/DType.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

class Generator;

/// A block of elements of one type on one device. Allocated once, never resized in place.
class Storage {
 public:
  /// Allocates `count` elements of `dtype`, uninitialised, on `device`. An nn::Error for a
  /// count outside [0, kMaxElements], a device that does not exist, or one over the thread's
  /// StorageLimit.
  Storage(int64_t count, const Device& device, DType dtype = DType::Float32);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// The first float of a float32 storage: host memory on a CPU device, device memory on a
  /// CUDA device. An nn::Error naming both types for a storage of another type.
  float* data() const {
    if (dtype_ != DType::Float32) throwNotFloat32();
    return static_cast<float*>(data_);
  }
  /// The first byte, of a storage of any type.
  void* bytes() const { return data_; }
  /// Number of elements.
  int64_t count() const { return count_; }
  /// Number of bytes the elements take: count() * elementSize(dtype()).
  int64_t byteCount() const { return count_ * elementSize(dtype_); }
  /// The elements' type.
  DType dtype() const { return dtype_; }
  /// Where the elements live.
  const Device& device() const { return device_; }

 private:
  [[noreturn]] void throwNotFloat32() const;

  void* data_ = nullptr;
  int64_t count_ = 0;
  DType dtype_ = DType::Float32;
  Device device_;
  // The serial number of the StorageLimit that counts this storage, 0 for none.
  uint64_t limitSerial_ = 0;
};

/// Number of Storage allocations made so far by this process (all devices).
int64_t storageAllocationCount();

/// While it lives, the storage (on any device) that this thread allocates and still holds may
/// take at most `bytes`: a Storage that would go over is an nn::Error naming `purpose`. nn::load
/// builds a file's modules under one, so that a few bytes of corrupted module tree cannot ask
/// for gigabytes before its parameters are compared with the file's tensors. The innermost of
/// nested limits counts.
class StorageLimit {
 public:
  /// Makes this the calling thread's innermost limit, allowing `bytes`; `purpose` says in the
  /// error what the storage is for ("the module tree, which needs ...").
  StorageLimit(int64_t bytes, std::string purpose);
  /// Makes the limit around this one (or none) the thread's limit again.
  ~StorageLimit();
  StorageLimit(const StorageLimit&) = delete;
  StorageLimit& operator=(const StorageLimit&) = delete;

  /// The bytes still allowed: `bytes` less the storage allocated under this limit and still
  /// held (each storage counts at least 4 bytes).
  int64_t bytesLeft() const { return bytesLeft_; }
  /// What the limited storage is for, as given to the constructor.
  const std::string& purpose() const { return purpose_; }

 private:
  friend class Storage;
  int64_t bytesLeft_;
  std::string purpose_;
  StorageLimit* outer_;
  // Tells this limit from an earlier one at the same address, for Storage's destructor.
  uint64_t serial_;
};

/// What a Tensor handle points to, shared by all its copies: set_() and resize_() change it for
/// every one of them.
struct TensorImpl {
  /// The elements viewed; null for a tensor that never had any (Tensor()).
  std::shared_ptr<Storage> storage;
  /// The elements' type: the storage's, and the type resize_ allocates.
  DType dtype = DType::Float32;
  /// Index of the first element in storage, in elements of the storage's type.
  int64_t offset = 0;
  /// Size of each dimension, outermost first; [0] for Tensor().
  std::vector<int64_t> sizes{0};
  /// Distance between neighbours along each dimension, in elements (at least 0).
  std::vector<int64_t> strides{1};
};

/// A tensor on one device (Torch7's torch.FloatTensor and torch.CudaTensor in one type), float32
/// unless made of another element type: a handle whose copies share one view (see the top of
/// this file). Sizes, strides, offsets and indices count elements; a size, dimension or index
/// out of range is an nn::Error.
class Tensor {
 public:
  /// An empty tensor (sizes [0]) on cpu:0.
  Tensor();
  /// Uninitialised memory of the given sizes and element type, contiguous, on `device`. An
  /// nn::Error for a negative size, more than kMaxElements elements or a device that does not
  /// exist.
  static Tensor empty(const std::vector<int64_t>& sizes, const Device& device = Device(), DType dtype = DType::Float32);
  /// Zeros of the given sizes, contiguous, on `device` (torch.zeros).
  static Tensor zeros(const std::vector<int64_t>& sizes, const Device& device = Device(), DType dtype = DType::Float32);
  /// `value` in every element, of the given sizes, contiguous, on `device` (torch.full), rounded
  /// to `dtype` as copy_ rounds.
  static Tensor full(const std::vector<int64_t>& sizes, float value, const Device& device = Device(),
                     DType dtype = DType::Float32);
  /// Row-major values; values.size() must equal the product of sizes.
  static Tensor fromVector(const std::vector<int64_t>& sizes, const std::vector<float>& values,
                           const Device& device = Device());
  /// Uniform in [0, 1) from `generator` (torch.rand): the same values on every device.
  static Tensor rand(const std::vector<int64_t>& sizes, Generator& generator, const Device& device = Device());
  /// Standard normal from `generator` (torch.randn): the same values on every device.
  static Tensor randn(const std::vector<int64_t>& sizes, Generator& generator, const Device& device = Device());

  /// Number of dimensions: 1 for Tensor() (sizes [0]), 0 for the one element that select()
  /// takes from a 1-D tensor.
  int dim() const { return static_cast<int>(impl_->sizes.size()); }
  /// Size of dimension d, from 0 to dim() - 1 (no negative d); an nn::Error otherwise.
  int64_t size(int d) const;
  /// Distance in elements between neighbours along dimension d (0 to dim() - 1); an nn::Error
  /// otherwise.
  int64_t stride(int d) const;
  /// Size of every dimension, outermost first.
  const std::vector<int64_t>& sizes() const { return impl_->sizes; }
  /// Stride of every dimension, in elements.
  const std::vector<int64_t>& strides() const { return impl_->strides; }
  /// Number of elements: the product of sizes() (0 where a size is 0, 1 for no dimension).
  int64_t numel() const;
  /// Index in storage() of the first element, in elements.
  int64_t storageOffset() const { return impl_->offset; }
  /// The elements' type (float32 for Tensor()).
  DType dtype() const { return impl_->dtype; }
  /// The storage viewed, shared with every view of it; null for a tensor that never had any.
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  /// The storage's device; cpu:0 for a tensor without storage.
  Device device() const;
  /// True where the elements lie row-major and without gaps from storageOffset() (a dimension of
  /// size 1 may have any stride): what view(), mul_() and the element-wise operations need.
  bool isContiguous() const;
  /// Same TensorImpl (not just the same storage).
  bool is(const Tensor& other) const { return impl_ == other.impl_; }
  /// "[4, 1, 28, 28]"
  std::string shapeString() const;
  /// sizes() == sizes, without building a vector.
  bool hasSizes(std::initializer_list<int64_t> sizes) const;

  /// Pointer to the first element. Only for float32 tensors on a CPU device: an nn::Error naming
  /// both types for a tensor of another type (Note [Element types] in Tensor.cpp).
  float* data() const;
  /// Device pointer to the first element of a float32 tensor, for kernels of any device; an
  /// nn::Error naming both types for a tensor of another type.
  float* rawData() const;
  /// Pointer to the first element, typed, for the kernels of each element type: T is float for
  /// a float32 tensor, uint16_t (the bits, nn/math/Half.h) for a bfloat16 or float16 one; an
  /// nn::Error otherwise, or for a tensor that is not on a CPU device.
  template <typename T>
  T* data() const;
  /// Device pointer to the first element, typed as data<T>() is, for kernels of any device.
  template <typename T>
  T* rawData() const;
  /// Device pointer to the first element's bytes, of a tensor of any type (null without storage).
  void* rawBytes() const;

  // Views (share storage). Every view is checked to lie inside its storage, its sizes and
  // strides at least 0 and its extent at most kMaxElements, all without overflow: a size, start
  // or index out of range is an nn::Error, never a view that reaches outside (nn/tensor/Checked.h).
  /// View of indices [start, start + length) along dimension `dim`, sharing storage (Torch7's
  /// narrow): this tensor's sizes with `length` at `dim`. An nn::Error for dim or the range out
  /// of bounds.
  Tensor narrow(int dim, int64_t start, int64_t length) const;
  /// View of index `index` along dimension `dim`, without that dimension, sharing storage
  /// (Torch7's select; a 1-D tensor gives a tensor of no dimension and one element). An
  /// nn::Error for dim or index out of range.
  Tensor select(int dim, int64_t index) const;
  /// Sizes may hold one -1, inferred. Needs a contiguous tensor.
  Tensor view(std::vector<int64_t> sizes) const;
  /// View with dimensions dim0 and dim1 swapped (their sizes and strides), sharing storage and
  /// in general not contiguous. An nn::Error for a dimension out of range.
  Tensor transpose(int dim0, int dim1) const;

  // Copies.
  /// This tensor (a handle of the same view) where it is contiguous, else clone().
  Tensor contiguous() const;
  /// A contiguous copy in new storage, of the same sizes and on the same device.
  Tensor clone() const;
  /// This tensor if already there, else a contiguous copy on `device` of the same element type.
  Tensor to(const Device& device) const;
  /// This tensor if already of `dtype`, else a contiguous copy of that type on the same device,
  /// each element rounded as copy_ rounds.
  Tensor to(DType dtype) const;
  /// The elements in row-major order as floats (exact for every type), copied to the host from
  /// any device and any strides.
  std::vector<float> toVector() const;
  /// Element at a full index as a float, for tests and small reads (CPU only; any type).
  float at(std::initializer_list<int64_t> index) const;

  // In place.
  /// Copies src (same number of elements, any device, any strides, any element type) into this
  /// tensor, converting to this tensor's type: to bfloat16 and float16 rounded to nearest, ties
  /// to even (nn/math/Half.h: float16 overflows to infinity beyond 65504, NaN stays NaN);
  /// widening is exact.
  Tensor& copy_(const Tensor& src);
  /// Sets every element (any strides) to `value`, rounded to this tensor's type; returns this
  /// tensor.
  Tensor& fill_(float value);
  /// fill_(0).
  Tensor& zero_() { return fill_(0.f); }
  /// Contiguous sizes on this tensor's device, of its element type; keeps the storage when it is large enough from the
  /// offset, else allocates new, uninitialised storage. Allocates nothing when the storage
  /// already fits: steady training steps resize freely.
  Tensor& resize_(const std::vector<int64_t>& sizes);
  /// resize_ on `device`: a tensor whose storage lies elsewhere, or is too small from the offset,
  /// gets new, uninitialised storage there (nothing is copied). Every handle of this tensor sees
  /// the new sizes; other views of a kept storage see what is written. An nn::Error for a
  /// negative size or more than kMaxElements elements.
  Tensor& resize_(const std::vector<int64_t>& sizes, const Device& device);
  /// The same with the sizes as a braced list, `t.resize_({batch, 10}, device)`, without building
  /// a vector.
  Tensor& resize_(std::initializer_list<int64_t> sizes, const Device& device);
  /// resize_ to other's sizes on other's device (Torch7's resizeAs); the values are not copied.
  Tensor& resizeAs_(const Tensor& other) { return resize_(other.sizes(), other.device()); }
  /// Makes this handle view `src`'s storage with src's offset, sizes, strides and element type.
  Tensor& set_(const Tensor& src);
  /// Contiguous sizes at `offset` (at least 0) of `storage`, of its element type: an nn::Error
  /// where they reach outside.
  Tensor& set_(const std::shared_ptr<Storage>& storage, int64_t offset, const std::vector<int64_t>& sizes);
  /// The same with the given strides (at least 0): a view with no new handle, so that a module
  /// that copies through a strided view of its own buffer allocates nothing in a steady step.
  Tensor& set_(const std::shared_ptr<Storage>& storage, int64_t offset, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides);
  /// this += alpha * other (same sizes, same device, both contiguous).
  Tensor& add_(const Tensor& other, float alpha = 1.f);
  /// this = a + b, resized (contiguous) to a's sizes on a's device (Torch7's z:add(x, y); a and
  /// b: same sizes, same device, both contiguous), the same floats as a copy of a and add_(b) in
  /// one pass over memory where those take two.
  Tensor& add_(const Tensor& a, const Tensor& b);
  /// this *= value (contiguous).
  Tensor& mul_(float value);
  /// this *= other, element by element (Torch7's cmul; same sizes, same device, both contiguous).
  Tensor& cmul_(const Tensor& other);
  /// this = a * b, element by element, resized (contiguous) to a's sizes on a's device (Torch7's
  /// z:cmul(x, y); a and b: same sizes, same device, both contiguous). One pass over memory
  /// where a copy and cmul_ would take two.
  Tensor& cmul_(const Tensor& a, const Tensor& b);
  /// this /= other, element by element (Torch7's cdiv; same sizes, same device, both contiguous).
  Tensor& cdiv_(const Tensor& other);
  /// Fills with values uniform in [low, high) from `generator`, drawn on the host in row-major
  /// order and copied in: the same values on every device. An nn::Error for bounds that
  /// Generator::uniform refuses.
  Tensor& uniform_(Generator& generator, float low, float high);
  /// Fills with normal values of `mean` and `stddev` from `generator`, drawn on the host in
  /// row-major order and copied in: the same values on every device. An nn::Error for a mean or
  /// stddev that Generator::normal refuses.
  Tensor& normal_(Generator& generator, float mean, float stddev);

  /// Sum of all elements, accumulated in double.
  double sum() const;
  /// Mean of all elements, accumulated in double (NaN for no element).
  double mean() const;
  /// The value of a tensor of one element, of any dimension (copied to the host).
  float item() const;

  // Reductions along dimension `dim` (from 0; negative counts from the end, -1 the last), as
  // torch's: the result drops that dimension, or keeps it with size 1 where keepDim. New
  // contiguous tensors on this tensor's device; sums accumulate in double, in order.
  /// Sum along `dim` (torch.sum(t, dim, keepDim)); an empty dimension sums to 0. An nn::Error
  /// for dim out of range.
  Tensor sum(int dim, bool keepDim = false) const;
  /// Mean along `dim` (torch.mean(t, dim, keepDim)): the double sum divided by the size, NaN for
  /// an empty dimension. An nn::Error for dim out of range.
  Tensor mean(int dim, bool keepDim = false) const;
  /// The greatest values along dim (a NaN is greater than every number, as in torch).
  Tensor max(int dim, bool keepDim = false) const;
  /// The index, from 0, of the first greatest value along dim, as a float: `output.argmax(1)`
  /// gives a batch's predicted classes, comparable with ClassNLLCriterion's targets.
  Tensor argmax(int dim, bool keepDim = false) const;

  // Element-wise comparisons with a tensor of the same sizes on the same device, or with a
  // number: a new tensor of these sizes holding 1 where the comparison holds and 0 where not
  // (NaN equals nothing). `prediction.eq(target).mean()` is an accuracy.
  /// 1 where this == other, element by element, else 0. An nn::Error for other sizes or device.
  Tensor eq(const Tensor& other) const;
  /// 1 where this != other (and where either is NaN), else 0.
  Tensor ne(const Tensor& other) const;
  /// 1 where this < other, else 0.
  Tensor lt(const Tensor& other) const;
  /// 1 where this <= other, else 0.
  Tensor le(const Tensor& other) const;
  /// 1 where this > other, else 0.
  Tensor gt(const Tensor& other) const;
  /// 1 where this >= other, else 0.
  Tensor ge(const Tensor& other) const;
  /// 1 where an element equals `value`, else 0.
  Tensor eq(float value) const;
  /// 1 where an element differs from `value` (or is NaN), else 0.
  Tensor ne(float value) const;
  /// 1 where an element is less than `value`, else 0.
  Tensor lt(float value) const;
  /// 1 where an element is at most `value`, else 0.
  Tensor le(float value) const;
  /// 1 where an element is greater than `value`, else 0.
  Tensor gt(float value) const;
  /// 1 where an element is at least `value`, else 0.
  Tensor ge(float value) const;

 private:
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  void setContiguousStrides();
  Tensor& resizeImpl(const int64_t* sizes, size_t dims, const Device& device);
  /// A view of this tensor's storage, checked to lie inside it; `op` names the caller in errors.
  Tensor makeView(int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides, const char* op) const;
  /// The storage offset of index `index` along dimension `d`, checked not to overflow.
  int64_t offsetAlong(int d, int64_t index, const char* op) const;
  /// Throws unless `other` has this tensor's sizes and device and both are contiguous float32
  /// tensors (add_, cmul_, cdiv_).
  void checkElementwise(const char* op, const Tensor& other) const;
  /// Throws, naming `op` and both types, unless this tensor is float32.
  void checkFloat32(const char* op) const;

  std::shared_ptr<TensorImpl> impl_;
};

/// An nn::Error naming the operation `op` ("nn.Tensor.sum") and `dtype` unless it is float32:
/// what a method that computes in float32 says of a tensor of another element type.
void checkFloat32Tensor(DType dtype, const char* op);

/// Copies `length` indices along dimension `dim`: dst[..., dstStart + k, ...] = src[...,
/// srcStart + k, ...] for k < length. Both contiguous, of equal sizes in every other dimension,
/// on any devices. Unlike narrow() and copy_(), it makes no view, so that a training step that
/// splits and joins batches (DataParallelTable) allocates nothing.
void copyAlong(const Tensor& dst, int64_t dstStart, const Tensor& src, int64_t srcStart, int dim, int64_t length);

/// `into` = `parts` joined along `dim` in order, resized on `device`, by copyAlong (the parts on
/// any devices). The parts must agree in every other size: an nn::Error otherwise, which names
/// parts by `partName(i)` ("nn.JoinTable(dim=1): input[2]"). `sizes` is the caller's scratch,
/// so that a steady step allocates nothing.
void joinAlong(const std::vector<const Tensor*>& parts, int dim, const Device& device, Tensor& into,
               std::vector<int64_t>& sizes, FunctionRef<std::string(size_t)> partName);

/// `t` itself when contiguous, else `buffer` resized to hold a contiguous copy of it (a module's
/// scratch tensor: a steady step allocates nothing).
const Tensor& contiguousIn(const Tensor& t, Tensor& buffer);

/// Contiguous strides for sizes.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);
/// Product of sizes.
int64_t product(const std::vector<int64_t>& sizes);

/// "nn.Tensor [2, 3] on cpu:0 {1, 2, 3, 4, 5, 6}": the sizes, the element type where it is
/// not float32 ("nn.Tensor [2, 3] bfloat16 on cpu:0 {...}"), the device and the values in
/// order, the first six and the last where there are more than eight (copied to the host).
std::ostream& operator<<(std::ostream& out, const Tensor& t);

}  // namespace nn

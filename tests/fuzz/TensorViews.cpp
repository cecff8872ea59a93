// Tensor view operations from bytes. The bytes, read in order (0 once they run out): the two
// storages' sizes (0 to 32 floats), then operations of three or more bytes each: the tensor it
// applies to and where its result goes (a slot each), the operation, and its arguments, each a
// byte (an integer near 0 below 0xa0, else one of int64's ends; see integer()).
#include "tests/fuzz/TensorViews.h"

#include <climits>
#include <stdexcept>
#include <string>

#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Tensor.h"
#include "tests/fuzz/Bytes.h"

namespace nn::fuzz {

namespace {

constexpr int kSlots = 3;
constexpr int kMaxOperations = 64;
// The most elements an operation visits one by one (fill_, copy_, copyAlong, a read, the write
// after each operation). A view with a stride of 0 is legal at up to kMaxElements elements
// (Torch's expand), and filling 2^60 of them is the work it asks for, not a hang: such views
// are checked by checkInside only. 2^16 is more than any view over 32 floats with nonzero
// strides can have.
constexpr int64_t kMaxVisited = int64_t{1} << 16;

constexpr int64_t kIntegers[] = {
    INT64_MAX,     INT64_MAX - 1,          INT64_MAX - 2,    INT64_MIN,        INT64_MIN + 1,
    INT64_MAX / 2, INT64_MAX / 2 + 1,      INT64_MIN / 2,    int64_t{1} << 62, -(int64_t{1} << 62),
    kMaxElements,  kMaxElements + 1,       kMaxElements - 1, -kMaxElements,    int64_t{1} << 32,
    INT32_MAX,     int64_t{INT32_MAX} + 1, INT32_MIN,        int64_t{1} << 31, -4,
};

enum Operation : uint8_t {
  kNarrow,
  kSelect,
  kView,
  kTranspose,
  kSetContiguous,
  kSetStrided,
  kSetTensor,
  kResize,
  kFill,
  kCopy,
  kCopyAlong,
  kRead,
  kAt,
  kEmpty,
  kOperations
};

// From -3 to 12 for most bytes, one of int64's ends for the others.
int64_t integer(Bytes& in) {
  const uint8_t b = in.next();
  if (b < 0xa0) return static_cast<int64_t>(b % 16) - 3;
  return kIntegers[b % std::size(kIntegers)];
}

// A dimension: -1 to 4 for most bytes, int's ends for the others.
int dimension(Bytes& in) {
  const uint8_t b = in.next();
  if (b >= 0xf8) return b % 2 ? INT_MAX : INT_MIN;
  return static_cast<int>(b % 6) - 1;
}

std::vector<int64_t> integers(Bytes& in) {
  std::vector<int64_t> values(in.next() % 5);
  for (int64_t& v : values) v = integer(in);
  return values;
}

// Throws std::logic_error unless `t` lies inside its storage: sizes and strides of at least 0,
// an offset of at least 0, and, where it holds an element, its last element below the
// storage's count. Computed in 128 bits, so that a view that the library let overflow shows.
void checkInside(const Tensor& t, const char* after) {
  const std::vector<int64_t>& sizes = t.sizes();
  const std::vector<int64_t>& strides = t.strides();
  bool ok = sizes.size() == strides.size() && t.storageOffset() >= 0, empty = false;
  __int128 last = t.storageOffset();
  for (size_t d = 0; ok && d < sizes.size(); ++d) {
    ok = sizes[d] >= 0 && strides[d] >= 0;
    empty = empty || sizes[d] == 0;
    __int128 step = 0;
    if (ok && !empty)
      ok = !__builtin_mul_overflow(static_cast<__int128>(sizes[d] - 1), static_cast<__int128>(strides[d]), &step) &&
           !__builtin_add_overflow(last, step, &last);
  }
  const int64_t count = t.storage() ? t.storage()->count() : 0;
  if (!ok || (!empty && last >= count))
    throw std::logic_error(std::string("after ") + after + ": a view of sizes " + shapeString(sizes) +
                           " with strides " + shapeString(strides) + " at offset " + std::to_string(t.storageOffset()) +
                           " reaches outside a storage of " + std::to_string(count) + " elements");
}

const char* const kNames[] = {
    "narrow", "select",    "view", "transpose", "set_", "set_ with strides", "set_ of a tensor", "resize_", "fill_",
    "copy_",  "copyAlong", "read", "at",        "empty"};

bool visitable(const Tensor& t) { return t.numel() <= kMaxVisited; }

void apply(Bytes& in, Tensor* slots, const std::shared_ptr<Storage>* storages) {
  Tensor& t = slots[in.next() % kSlots];
  Tensor& result = slots[in.next() % kSlots];
  const Tensor& other = slots[in.next() % kSlots];
  const uint8_t op = in.next() % kOperations;
  switch (op) {
    case kNarrow: {
      const int d = dimension(in);
      const int64_t start = integer(in), length = integer(in);
      result = t.narrow(d, start, length);
      break;
    }
    case kSelect: {
      const int d = dimension(in);
      result = t.select(d, integer(in));
      break;
    }
    case kView:
      result = t.view(integers(in));
      break;
    case kTranspose: {
      const int d0 = dimension(in), d1 = dimension(in);
      result = t.transpose(d0, d1);
      break;
    }
    case kSetContiguous: {
      const std::shared_ptr<Storage>& storage = storages[in.next() % 2];
      const int64_t offset = integer(in);
      t.set_(storage, offset, integers(in));
      break;
    }
    case kSetStrided: {
      const std::shared_ptr<Storage>& storage = storages[in.next() % 2];
      const int64_t offset = integer(in);
      const std::vector<int64_t> sizes = integers(in);
      t.set_(storage, offset, sizes, integers(in));
      break;
    }
    case kSetTensor:
      t.set_(other);
      break;
    case kResize:
      t.resize_(integers(in));
      break;
    case kFill: {
      const float value = static_cast<float>(in.next());
      if (visitable(t)) t.fill_(value);
      break;
    }
    case kCopy:
      if (visitable(t) && visitable(other)) t.copy_(other);
      break;
    case kCopyAlong: {
      const int64_t dstStart = integer(in), srcStart = integer(in);
      const int d = dimension(in);
      const int64_t length = integer(in);
      if (visitable(t) && visitable(other)) copyAlong(t, dstStart, other, srcStart, d, length);
      break;
    }
    case kRead:
      if (!visitable(t)) break;
      result = t.contiguous().clone();
      result.sum();
      break;
    case kAt: {
      std::vector<int64_t> index = integers(in);
      switch (index.size()) {
        case 0:
          t.at({});
          break;
        case 1:
          t.at({index[0]});
          break;
        case 2:
          t.at({index[0], index[1]});
          break;
        case 3:
          t.at({index[0], index[1], index[2]});
          break;
        default:
          t.at({index[0], index[1], index[2], index[3]});
          break;
      }
      break;
    }
    case kEmpty:
      result = Tensor::zeros(integers(in));
      break;
    default:
      break;
  }
  for (int i = 0; i < kSlots; ++i) {
    checkInside(slots[i], kNames[op]);
    // A write through every view, where AddressSanitizer sees one that reaches outside.
    if (visitable(slots[i])) slots[i].fill_(static_cast<float>(op));
  }
}

}  // namespace

int runTensorViews(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  // resize_ and zeros take sizes from the bytes: gigabytes are refused before they are asked for.
  StorageLimit limit(int64_t{4} << 20, "a fuzz run's tensors");
  Tensor a = Tensor::zeros({in.next() % 33}), b = Tensor::zeros({in.next() % 33});
  const std::shared_ptr<Storage> storages[2] = {a.storage(), b.storage()};
  Tensor slots[kSlots] = {a, b, Tensor()};
  int accepted = 0;
  for (int n = 0; n < kMaxOperations && !in.done(); ++n) {
    try {
      apply(in, slots, storages);
      ++accepted;
    } catch (const Error&) {
    }
  }
  return accepted;
}

std::vector<std::string> tensorViewSeeds() {
  // Slot of the tensor, slot of the result, slot of the other tensor, operation, arguments.
  const auto op = [](uint8_t operation, std::initializer_list<uint8_t> arguments, uint8_t slot = 0, uint8_t result = 2,
                     uint8_t other = 1) {
    std::string bytes{static_cast<char>(slot), static_cast<char>(result), static_cast<char>(other),
                      static_cast<char>(operation)};
    for (uint8_t a : arguments) bytes += static_cast<char>(a);
    return bytes;
  };
  const std::string storages = {12, 6};
  // integer(): byte b below 0xa0 is b % 16 - 3; dimension(): b % 6 - 1.
  const uint8_t zero = 3, one = 4, two = 5, three = 6, four = 7, six = 9, twelve = 15, minusOne = 2;
  const uint8_t dim0 = 1, dim1 = 2;
  return {
      // [12] viewed as [3, 4], its column 1 narrowed, transposed, read and filled.
      storages + op(kView, {2, three, four}, 0, 0) + op(kSelect, {dim1, one}, 0, 2) +
          op(kNarrow, {dim0, one, two}, 2, 2) + op(kTranspose, {dim0, dim1}, 0, 2) + op(kRead, {}, 2, 2) +
          op(kFill, {7}, 2),
      // Strided and contiguous views set by hand, at() and copies between them.
      storages + op(kSetStrided, {0, zero, 2, two, three, 2, four, one}, 2) + op(kAt, {2, one, two}, 2) +
          op(kSetContiguous, {1, two, 1, four}, 0) + op(kCopy, {}, 0, 0, 2) + op(kSetTensor, {}, 1, 1, 0),
      // resize_, zeros, a copy along a dimension and a view with -1.
      storages + op(kResize, {2, two, six}, 0) + op(kEmpty, {2, two, three}, 0, 1) +
          op(kCopyAlong, {zero, one, dim1, two}, 0, 0, 1) + op(kView, {2, minusOne, twelve}, 0, 2),
      // The cases: narrow(0, 2^63 - 2, 3), narrow(0, 2, 2^63 - 1), set_ at -4.
      storages + op(kNarrow, {dim0, zero, three}, 0, 0) + op(kNarrow, {dim0, 0xa1, three}, 0, 2) +
          op(kNarrow, {dim0, two, 0xa0}, 0, 2) + op(kSetContiguous, {0, 0xb3, 1, four}, 2),
  };
}

}  // namespace nn::fuzz

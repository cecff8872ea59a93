// Checked int64 arithmetic for the sizes, offsets, strides and indices that callers and files
// give (STYLE.md rule 15): sums, products and ranges computed without overflow, so that a value
// out of range is an nn::Error rather than a wrapped number that a kernel then writes through.
// The tensor core, the modules' shape arithmetic and the loader use these, and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>

#include "nn/tensor/Error.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// The most elements a tensor holds (4 EiB of floats), so that no element count, stride or
/// byte count overflows; larger sizes are an nn::Error. A module's configuration value that
/// becomes a size, a distance or an index (a padding, a kernel, an offset) lies within
/// [-kMaxElements, kMaxElements] too, so that a few of them add up without overflow.
constexpr int64_t kMaxElements = int64_t{1} << 60;

/// a + b in `out`; false where the exact sum leaves int64 (`out` then means nothing).
[[nodiscard]] inline bool addInto(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
/// a * b in `out`; false where the exact product leaves int64.
[[nodiscard]] inline bool mulInto(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

/// offset >= 0, length >= 0 and offset + length <= size, without forming the sum: the range
/// [offset, offset + length) lies within [0, size).
inline bool rangeWithin(int64_t offset, int64_t length, int64_t size) {
  return offset >= 0 && length >= 0 && offset <= size && length <= size - offset;
}

/// "[2, 5)" for offset 2 and length 3, as messages write a range; "[9223372036854775806, +3)"
/// where the end is beyond int64.
inline std::string rangeString(int64_t offset, int64_t length) {
  int64_t end = 0;
  return "[" + std::to_string(offset) + ", " +
         (addInto(offset, length, end) ? std::to_string(end) : "+" + std::to_string(length)) + ")";
}

/// 0 <= value <= kMaxElements: a size or a distance that a tensor's dimension can have.
inline bool isExtent(int64_t value) { return value >= 0 && value <= kMaxElements; }
/// -kMaxElements <= value <= kMaxElements: an index or an offset that may count from the end.
inline bool isSignedExtent(int64_t value) { return value >= -kMaxElements && value <= kMaxElements; }

/// The product of `sizes` (each at least 0), counting a size of 0 as 1 as the strides do, in
/// `extent`; false where a size is negative or the extent exceeds kMaxElements. A tensor's
/// sizes pass this, so that no product of its sizes and no stride overflows.
[[nodiscard]] inline bool extentOf(const int64_t* sizes, size_t dims, int64_t& extent) {
  extent = 1;
  for (size_t i = 0; i < dims; ++i)
    if (sizes[i] < 0 || !mulInto(extent, sizes[i] > 0 ? sizes[i] : 1, extent) || extent > kMaxElements) return false;
  return true;
}

namespace checked_detail {

[[noreturn]] inline void overflow(std::initializer_list<int64_t> terms, const char* op,
                                  FunctionRef<std::string()> context) {
  std::ostringstream message;
  message << context() << ": ";
  const char* separator = "";
  for (int64_t t : terms) {
    message << separator << t;
    separator = op;
  }
  message << " is beyond the range of a 64-bit integer";
  throw Error(message.str());
}

}  // namespace checked_detail

/// The sum of `terms`, or an nn::Error "<context()>: a + b + ... is beyond the range of a 64-bit
/// integer". `context` is called only then, so that a steady step allocates nothing.
inline int64_t checkedSum(std::initializer_list<int64_t> terms, FunctionRef<std::string()> context) {
  int64_t sum = 0;
  for (int64_t t : terms)
    if (!addInto(sum, t, sum)) checked_detail::overflow(terms, " + ", context);
  return sum;
}

/// The product of `factors` (0 where one is 0), or an nn::Error as checkedSum's.
inline int64_t checkedProduct(std::initializer_list<int64_t> factors, FunctionRef<std::string()> context) {
  for (int64_t f : factors)
    if (f == 0) return 0;
  int64_t product = 1;
  for (int64_t f : factors)
    if (!mulInto(product, f, product)) checked_detail::overflow(factors, " x ", context);
  return product;
}

}  // namespace nn

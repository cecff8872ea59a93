// Checks of a tensor's values on a CUDA device (Backend::checkValues, Note [Host
// synchronisations] in nn/backend/Backend.h): a kernel checks the values where they are and
// writes the first bad one into its device's CheckRecord; the host reads the record when it
// next waits for the device anyway, and throws the error the host's check would give. Kernels
// that index with checked values (a criterion's targets, LookupTable's indices) do nothing
// once a check has failed, so that a bad value never becomes a read or write out of bounds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "nn/backend/Backend.h"
#include "nn/math/HostDevice.h"

namespace nn::cuda {

/// One device's record of failed value checks, in its memory.
struct CheckRecord {
  /// The number the host gave the first checking launch that found a bad value (launches run
  /// in the stream's order); 0 while none has.
  unsigned int launch;
  /// That launch's first bad value: its position in the high 32 bits (saturated), its float's
  /// bits in the low 32 (packFailure), so that atomicMin keeps the lowest position.
  unsigned long long first;
};

/// What a record holds before any check fails, as bytes: launch 0 (the memset value of
/// `launch`), and the largest `first` (that of `first`), so that any failure is smaller.
constexpr int kCleanLaunchByte = 0;
constexpr int kCleanFirstByte = 0xff;

/// Whether a check on this device has failed since the host last read the record.
NN_HD inline bool checkFailed(const CheckRecord* record) { return record->launch != 0u; }

/// `first` of a failure at `position` with value bits `bits`.
NN_HD inline unsigned long long packFailure(size_t position, unsigned int bits) {
  const unsigned long long p = position < 0xffffffffull ? position : 0xffffffffull;
  return (p << 32) | bits;
}
/// The position of a packed failure.
NN_HD inline int64_t failurePosition(unsigned long long first) { return static_cast<int64_t>(first >> 32); }
/// The value bits of a packed failure.
NN_HD inline unsigned int failureBits(unsigned long long first) { return static_cast<unsigned int>(first); }

/// Queues on `stream` (of the current device) the check of the n floats at `values` against
/// `check`, as launch number `launch`, into `record`.
void launchCheckValues(const float* values, size_t n, const ValueCheck& check, unsigned int launch, CheckRecord* record,
                       cudaStream_t stream);

}  // namespace nn::cuda

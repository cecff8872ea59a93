// The checks of a tensor's values that modules make before using them as indices or as
// probabilities, shared by the host loop (nn/backend/Backend.cpp) and the CUDA kernel
// (nn/cuda/ValueChecks.cu), so that both devices accept the same values.
#pragma once

#include <math.h>  // floorf: the float function of both the host and nvcc device code
#include <stdint.h>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// What a value must be; each kind has its own error message (nn::valueCheckMessage).
enum class ValueKind {
  /// A class index from 0 below the limit (a criterion's targets).
  ClassTarget,
  /// An index from 0 below the limit (LookupTable's input).
  Index,
  /// A probability in [0, 1] (BCECriterion's input); the limit is not used.
  UnitInterval,
};

/// Whether v is a value of `kind`; NaN never is.
NN_HD inline bool passesValueCheck(ValueKind kind, int64_t limit, float v) {
  if (kind == ValueKind::UnitInterval) return v >= 0.f && v <= 1.f;
  return v >= 0.f && v < static_cast<float>(limit) && floorf(v) == v;
}

}  // namespace nn::math

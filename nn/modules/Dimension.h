// nn::resolveDimension: Torch7's rule for the dimension argument of Sum, Mean, Max, JoinTable and
// SplitTable (each with nInputDims), resolved for an input of a given number of dimensions.
#pragma once

#include <cstdint>
#include <string>

namespace nn {

/// A negative `dim` counts from the end; with nInputDims >= 0, an input of more dimensions than
/// nInputDims is a batch and a non-negative `dim` counts from its second. In 64 bits, as a file's
/// dim may be INT_MAX; the caller checks that the result lies in [0, dims).
inline int64_t resolveDimension(int dim, int nInputDims, int dims) {
  if (dim < 0) return static_cast<int64_t>(dims) + dim;
  return nInputDims >= 0 && dims > nInputDims ? static_cast<int64_t>(dim) + 1 : dim;
}

/// The words an error adds after "dimension <dim>" where nInputDims >= 0 (nothing otherwise).
inline std::string batchDimensionNote(int nInputDims) {
  return nInputDims >= 0 ? " (after a batch dimension where the input has more than " + std::to_string(nInputDims) + ")"
                         : std::string();
}

}  // namespace nn

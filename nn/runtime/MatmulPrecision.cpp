// The precision of float32 matrix products (MatmulPrecision.h).
#include "nn/runtime/MatmulPrecision.h"

#include <atomic>

#include "nn/tensor/Error.h"

namespace nn {

namespace {
std::atomic<MatmulPrecision> gPrecision{MatmulPrecision::highest};
}  // namespace

void setFloat32MatmulPrecision(MatmulPrecision precision) { gPrecision.store(precision, std::memory_order_relaxed); }

MatmulPrecision float32MatmulPrecision() { return gPrecision.load(std::memory_order_relaxed); }

const char* matmulPrecisionName(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::high:
      return "high";
    case MatmulPrecision::medium:
      return "medium";
    default:
      return "highest";
  }
}

MatmulPrecision matmulPrecisionNamed(const std::string& name) {
  for (MatmulPrecision precision : {MatmulPrecision::highest, MatmulPrecision::high, MatmulPrecision::medium})
    if (name == matmulPrecisionName(precision)) return precision;
  NN_CHECK(false, "float32 matmul precision: expected highest, high or medium, got '" << name << "'");
  return MatmulPrecision::highest;
}

}  // namespace nn

// The calling thread's autocast scope (Autocast.h).
#include "nn/runtime/Autocast.h"

#include <string>

#include "nn/tensor/Error.h"

namespace nn {

namespace {
thread_local DType tType = DType::Float32;
}  // namespace

DType autocastType() { return tType; }

void setAutocastType(DType dtype) { tType = dtype; }

Autocast::Autocast(DType dtype, bool enabled) : type_(enabled ? dtype : DType::Float32), previous_(tType) {
  tType = type_;
}

Autocast::~Autocast() { tType = previous_; }

DType autocastNamed(const char* name) {
  const std::string n = name ? name : "";
  if (n == "bf16" || n == "bfloat16") return DType::BFloat16;
  if (n == "fp16" || n == "float16") return DType::Float16;
  if (n == "off" || n == "fp32" || n == "float32") return DType::Float32;
  NN_CHECK(false, "autocast: expected bf16, fp16 or off, got '" << n << "'");
  return DType::Float32;
}

}  // namespace nn

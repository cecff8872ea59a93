// libFuzzer target for Tensor's views: each input is a sequence of narrow, select, view, set_,
// resize_ and the like with int64's ends on tensors of a few floats (tests/fuzz/TensorViews.h).
#include "tests/fuzz/TensorViews.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::runTensorViews(data, size);
  return 0;
}

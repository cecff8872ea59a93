// libFuzzer target for the Torch7 reader: each input is a file for nn::readTorch7 and
// nn::loadTorch7.
#include "tests/fuzz/Readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::readTorch7(data, size);
  return 0;
}

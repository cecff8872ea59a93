// libFuzzer target for the safetensors, module and checkpoint readers: each input is a file
// for nn::load, nn::loadStateInto and nn::loadCheckpoint.
#include "tests/fuzz/Readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::readCheckpoint(data, size);
  return 0;
}

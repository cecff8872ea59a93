// libFuzzer target for nn::IdxFile::read: each input is an IDX file, plain or gzip.
#include "tests/fuzz/Readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::readIdx(data, size);
  return 0;
}

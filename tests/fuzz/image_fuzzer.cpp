// libFuzzer target for nn::decodeImage (PNG and JPEG through libpng and libjpeg-turbo): each
// input is a file's bytes.
#include "tests/fuzz/Readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::readImage(data, size);
  return 0;
}

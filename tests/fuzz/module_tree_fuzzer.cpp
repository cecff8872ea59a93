// libFuzzer target for module trees past the reader: each input describes a tree of modules with
// configuration values at int64's ends, loaded as nn::load loads a file's and run forward and
// backward (tests/fuzz/ModuleTrees.h). A quarter of the inputs are written afresh rather than
// mutated, so that every module type meets every extreme soon.
#include <cstring>
#include <random>

#include "tests/fuzz/ModuleTrees.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t maxSize, unsigned int seed) {
  if (seed % 4 != 0) return LLVMFuzzerMutate(data, size, maxSize);
  const std::string fresh = nn::fuzz::randomModuleTree(seed / 4);
  if (fresh.size() > maxSize) return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, fresh.data(), fresh.size());
  return fresh.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nn::fuzz::runModuleTree(data, size);
  return 0;
}

// Launch shapes shared by the backend's kernels: a fixed block size and a grid-stride loop,
// so that any element count fits in a grid of bounded size. Included by .cu files only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nn::cuda {

constexpr unsigned kThreads = 256;
// Enough blocks to fill every GPU we build for; a grid-stride loop covers the rest, so the
// grid size never overflows whatever the count.
constexpr size_t kMaxBlocks = 4096;

inline unsigned blocksFor(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace nn::cuda

// Dropout's formulas: the noise factor of a uniform draw, and the draws of a mask from a key,
// element by element (Dropout draws its masks on the host, for every device type).
#pragma once

#include <cstdint>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// MurmurHash3's 32-bit finaliser: a bijection that spreads every input bit over the output.
NN_HD inline uint32_t dropoutMix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

/// The key of the block of 2^32 elements that holds element i (i's high 32 bits mixed into k1), for
/// dropoutUniformInBlock.
NN_HD inline uint32_t dropoutBlockKey(uint32_t k1, int64_t i) {
  return k1 ^ (static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32) * 0x9e3779b9u);
}

/// The uniform u in [0, 1) of element i of the mask keyed (k0, k1): 24 bits of a hash of i and
/// the key, dropoutUniformInBlock(k0, dropoutBlockKey(k1, i), the low 32 bits of i). Each
/// element's draw depends on nothing else, so a mask may be drawn in parts, in any order, by
/// any number of threads, and gives the same floats; a loop over elements whose indices share
/// their high 32 bits takes dropoutBlockKey out of the loop.
NN_HD inline float dropoutUniformInBlock(uint32_t k0, uint32_t blockKey, uint32_t low) {
  const uint32_t h = dropoutMix(dropoutMix(low ^ k0) + blockKey);
  return static_cast<float>(static_cast<int32_t>(h >> 8)) * (1.0f / 16777216.0f);
}

/// Torch7's v2 dropout: the factor for one element is 1 / (1 - p) with probability 1 - p and 0
/// otherwise, from a uniform u in [0, 1). Scaling at training time keeps the expected output
/// equal to the input, so evaluation passes the input through unchanged.
/// In two steps for loops, which compute the scale once: dropoutScale(p) = 1 / (1 - p), then
/// dropoutFactor(u, p, scale).
NN_HD inline float dropoutScale(float p) { return 1.f / (1.f - p); }
/// The factor of one element: scale (dropoutScale(p)) where u < 1 - p, else 0.
NN_HD inline float dropoutFactor(float u, float p, float scale) { return u < 1.f - p ? scale : 0.f; }
/// The factor of one element in one step: dropoutFactor(u, p, dropoutScale(p)).
NN_HD inline float dropoutNoise(float u, float p) { return dropoutFactor(u, p, dropoutScale(p)); }

}  // namespace nn::math

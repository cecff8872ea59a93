// PyTorch 1.13.0's embedding of the indices below and its weight's gradient: written by
// tests/reference/make_lookup_reference.py, which says how. Do not edit.
#pragma once

#include <vector>

namespace nn::test {

inline const std::vector<float> kLookupIndices{0.f, 4.f, 2.f, 4.f, 5.f, 1.f, 4.f, 0.f, 3.f, 4.f};

inline const std::vector<float> kTorchLookup{-0.75f, 0.f, 0.75f, -0.5f, 0.25f, -0.75f, 0.25f, -0.75f, 0.f, -0.5f, 0.25f, -0.75f, 0.f, 0.75f, -0.25f, -0.25f, 0.5f, -0.5f, -0.5f, 0.25f, -0.75f, -0.75f, 0.f, 0.75f, 0.75f, -0.25f, 0.5f, -0.5f, 0.25f, -0.75f};

inline const std::vector<float> kTorchLookupGradWeight{-2.f, 1.5f, -1.5f, -1.25f, 0.5f, -1.f, -0.75f, 1.f, -0.5f, 1.5f, 0.f, -1.5f, 2.75f, -3.25f, 3.75f, 0.f, -1.5f, 0.25f};

}  // namespace nn::test

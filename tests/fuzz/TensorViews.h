// Sequences of Tensor view operations made from a fuzzer's bytes, for
// tests/fuzz/tensor_view_fuzzer.cpp and its regression test (tests/io/fuzz_test.cpp): narrow,
// select, view, transpose, set_ (with and without strides), resize_, copyAlong, at and the
// copies and fills that read and write through the views, on tensors of a few floats, with
// sizes, offsets, strides and indices at int64's ends. An nn::Error is the expected answer to
// arguments out of range; a view that reaches outside its storage is a bug, reported as
// std::logic_error by the check after every operation, or by AddressSanitizer at the first
// write through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nn::fuzz {

/// Runs the operations that the bytes describe on three tensors over two storages of up to 32
/// floats, under a StorageLimit of 4 MB. Returns how many operations were accepted.
int runTensorViews(const uint8_t* data, size_t size);

/// A few operation sequences, each of every kind at least once: the seed corpus.
std::vector<std::string> tensorViewSeeds();

}  // namespace nn::fuzz

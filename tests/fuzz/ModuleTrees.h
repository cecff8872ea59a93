// Module trees made from a fuzzer's bytes, for tests/fuzz/module_tree_fuzzer.cpp and its
// regression test (tests/io/fuzz_test.cpp): every module type of //nn, configuration values at
// int64's ends (and doubles at float's), containers three deep, built as nn::load builds a
// file's tree and then run forward and backward on a small input. An nn::Error is the expected
// answer to a configuration or an input that does not fit; anything else that leaves the run,
// a sanitizer report or a crash is a bug past the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/core/Module.h"

namespace nn::fuzz {

/// A small module of one type, whose config gives the fuzzer that type's fields (names, types
/// and values to start from), and an input it takes.
struct Prototype {
  ModulePtr module;
  std::vector<int64_t> inputSizes;
  /// Above 0: the input is a table of that many tensors of inputSizes.
  int tableItems = 0;
};

/// One prototype of every module type that //nn registers, in a fixed order (the bytes choose
/// by index). DataParallelTable, a container of //cunn that runs threads, is not among them.
const std::vector<Prototype>& prototypes();

/// Builds the tree that the bytes describe with nn::buildModuleTree (as nn::load does) and runs
/// forward, backward and forward again on the input that they describe, under a StorageLimit
/// of 64 MB; also rebuilds the tree from its own description, which must load. Returns 0 where
/// the tree was refused, 1 where a pass was, 2 where all ran; `refusal`, where given, gets the
/// refusal's message.
int runModuleTree(const uint8_t* data, size_t size, std::string* refusal = nullptr);

/// The bytes of a tree written afresh from `seed`: a module of a random type (a container with
/// up to two such children) on a random input, each field kept or given a new value, most of
/// them one of int64's ends. tests/fuzz/module_tree_fuzzer.cpp writes a quarter of
/// its inputs so: byte mutations alone find one field of one type at one extreme slowly.
std::string randomModuleTree(uint32_t seed);

/// The bytes that make runModuleTree build prototype `index` unchanged and run it on its input:
/// the seed corpus, one file per module type.
std::string moduleTreeSeed(size_t index);

}  // namespace nn::fuzz

// The file readers that the fuzz targets (tests/fuzz/*_fuzzer.cpp) drive, shared with their
// regression test (tests/io/fuzz_test.cpp) so that both make exactly the same calls.
//
// Each function hands the bytes to the readers as a file and returns how many of its reader
// calls accepted them. An nn::Error from a reader is the expected answer to a broken file
// and is caught here; any other exception leaves the function, and a crash, a sanitizer
// report or a hang is a bug in the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nn/data/BatchIterator.h"
#include "nn/io/Checkpoint.h"
#include "nn/modules/Sequential.h"
#include "nn/optim/SGD.h"

namespace nn::fuzz {

/// nn::IdxFile::read on the bytes as they are (plain or gzip), and, unless they are gzip
/// already, on their gzip compression too; throws std::logic_error if the two disagree.
/// Returns 0 to 2.
int readIdx(const uint8_t* data, size_t size);

/// readSafetensors, nn::load, nn::loadStateInto and nn::loadCheckpoint on the bytes as a
/// safetensors file, the last two into a fresh CheckpointSetup. Returns 0 to 4.
int readCheckpoint(const uint8_t* data, size_t size);

/// nn::readTorch7 and nn::loadTorch7 on the bytes as a Torch7 file. Returns 0 to 2.
int readTorch7(const uint8_t* data, size_t size);

/// nn::decodeImageHeader and nn::decodeImage on the bytes as a PNG or JPEG file (at most 2^20
/// pixels), then the decoded picture converted to grey and to RGB and made a tensor; throws
/// std::logic_error if the header and the picture disagree. Returns 0 to 2.
int readImage(const uint8_t* data, size_t size);

/// The training setup that readCheckpoint loads into, and that the seed corpus's checkpoints
/// are written from: Sequential(Linear(4, 3), ReLU, Linear(3, 2)), SGD with momentum, and
/// 6 samples in batches of 4.
struct CheckpointSetup {
  CheckpointSetup();

  std::shared_ptr<Sequential> model;
  SGD sgd;
  BatchIterator batches;
  TrainingState state;
};

}  // namespace nn::fuzz

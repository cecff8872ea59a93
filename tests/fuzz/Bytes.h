// A fuzz input read a byte at a time: past its end every byte is 0, so that any input, the
// empty one included, decodes to a whole sequence of choices.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nn::fuzz {

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return size_ == 0; }
  uint8_t next() {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace nn::fuzz

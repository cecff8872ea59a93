// nn::IdxFile: reads IDX files (the MNIST format: a magic number, big-endian sizes, then
// unsigned bytes), gzip-compressed or not, checking every size against the data present.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nn {

/// The contents of one IDX file of unsigned bytes.
struct IdxFile {
  /// Reads `path`, gzip-compressed or plain (zlib reads both). A missing, truncated or
  /// malformed file, or one with bytes after the declared data, is an nn::Error naming the
  /// path and what is wrong; `contents` names the data in those messages ("image data").
  static IdxFile read(const std::string& path, const std::string& contents = "data");
  /// The sizes in `path`'s header, checked as read() checks them, without reading the data
  /// (of a gzip file, only the header is inflated): so that files can be compared before
  /// either costs its size.
  static std::vector<int64_t> readSizes(const std::string& path, const std::string& contents = "data");

  /// Sizes from the header, outermost first (rank 1 to 4).
  std::vector<int64_t> sizes;
  /// product(sizes) bytes, row-major.
  std::vector<uint8_t> data;
};

}  // namespace nn

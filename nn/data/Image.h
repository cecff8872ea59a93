// PNG and JPEG pictures decoded with Debian's libpng and libjpeg-turbo into 8-bit samples, and
// made [channels, height, width] float tensors in [0, 1] (nn::ImageFolder's samples). Every
// size comes from the file and is checked before memory is asked for it: a small file declaring
// a huge picture (a decompression bomb) is refused, as are truncated and corrupted files, each
// with an nn::Error naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace nn {

/// The most pixels (width x height) a picture may declare by default: 8192 x 8192.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;

/// The most scans a progressive JPEG may have. Each scan is a pass over the whole picture: a file
/// of a few hundred kilobytes, of hundreds of scans over 8192 x 8192 pixels, takes as many passes
/// over a large picture to decode, where pictures have about 10 (libjpeg's own progression has 10
/// for colour, 6 for grey).
constexpr int kMaxJpegScans = 100;

/// What a picture's file may hold beyond its pixels (EXIF, thumbnails, colour profiles, text):
/// a file of more than this plus 8 bytes a pixel (16-bit RGBA, stored) is refused before it is
/// read, and a header must end within this many bytes.
constexpr int64_t kImageMetadataBytes = int64_t{16} << 20;

/// A decoded picture: 8-bit samples, row-major [height, width, channels]: 1 grey, 2 grey and
/// alpha, 3 RGB, 4 RGBA.
struct Image {
  /// Rows of pixels.
  int64_t height = 0;
  /// Pixels in a row.
  int64_t width = 0;
  /// Samples per pixel, 1 to 4.
  int64_t channels = 0;
  /// height * width * channels samples, row-major [height, width, channels]; empty for a header only
  /// (decodeImageHeader).
  std::vector<uint8_t> pixels;
};

/// The bytes of a PNG (any bit depth and colour type: 16-bit samples keep their high byte,
/// palettes and transparency become RGB or RGBA, 1- to 4-bit grey becomes 8-bit) or a JPEG
/// (grey or colour; CMYK is refused; a progressive one of more than kMaxJpegScans scans is refused as
/// it is read). `name` names the file in errors; a picture of more than `maxPixels` pixels is
/// refused before it is decoded.
Image decodeImage(const std::string& bytes, const std::string& name, int64_t maxPixels = kMaxImagePixels);

/// The picture's sizes and channels from its header alone (what decodeImage would give).
Image decodeImageHeader(const std::string& bytes, const std::string& name, int64_t maxPixels = kMaxImagePixels);

/// The header of the file at `path` (as decodeImageHeader), read from as few of its bytes as
/// hold it. A path that is not a regular file is refused before it is read.
Image readImageHeader(const std::string& path, int64_t maxPixels = kMaxImagePixels);

/// The most bytes a file of a picture of height x width pixels may have:
/// kImageMetadataBytes + 8 bytes a pixel.
int64_t maxImageFileBytes(int64_t height, int64_t width);

/// The file at `path`, read and decoded: its header first, then the whole file where its size
/// is at most maxImageFileBytes of the header's sizes.
Image readImage(const std::string& path, int64_t maxPixels = kMaxImagePixels);

/// `image` with `channels` channels: 1 (grey: ITU-R 601 luma, 0.299 R + 0.587 G + 0.114 B, in
/// PIL's 16-bit fixed point, so that it equals PIL's convert("L")) or 3 (grey repeated); alpha
/// dropped.
Image convertChannels(const Image& image, int64_t channels);

/// [channels, height, width] floats, each sample / 255.
Tensor imageTensor(const Image& image);

}  // namespace nn

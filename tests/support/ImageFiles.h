// Test support: pictures written with libpng and libjpeg, for the decoder's round trips and
// for folders of generated pictures (nn::ImageFolder, the residual network's --data).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nn::test {

/// Writes 8-bit samples [height, width, channels] (1 grey, 3 RGB, 4 RGBA) as a PNG; with
/// sixteenBits, each sample v as a 16-bit one whose high byte is v (and low byte v ^ 0x5a).
void writePng(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
              bool sixteenBits = false, bool interlaced = false);

/// Writes 8-bit samples [height, width, channels] (1 grey, 3 RGB) as a JPEG of `quality`.
void writeJpeg(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
               int quality = 95);

/// Writes RGB samples [height, width, 3] as a progressive JPEG: libjpeg's own progression
/// (10 scans), or with `scanPerCoefficient` one scan for the DC coefficients and one for each AC
/// coefficient of each component (190 scans), as a hostile file of many scans would.
void writeProgressiveJpeg(const std::string& path, int width, int height, const std::vector<uint8_t>& samples,
                          bool scanPerCoefficient);

}  // namespace nn::test

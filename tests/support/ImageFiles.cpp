#include "tests/support/ImageFiles.h"

#include <jpeglib.h>
#include <png.h>

#include <cstdio>
#include <stdexcept>

namespace nn::test {

void writePng(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
              bool sixteenBits, bool interlaced) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot create " + path);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  const int types[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
  // Rows prepared before any libpng call that may longjmp, so that none is skipped.
  const size_t bytes = sixteenBits ? 2 : 1, rowBytes = static_cast<size_t>(width * channels) * bytes;
  std::vector<uint8_t> data(rowBytes * static_cast<size_t>(height));
  for (size_t i = 0; i < samples.size(); ++i) {
    if (sixteenBits) {
      data[2 * i] = samples[i];
      data[2 * i + 1] = static_cast<uint8_t>(samples[i] ^ 0x5a);
    } else {
      data[i] = samples[i];
    }
  }
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int r = 0; r < height; ++r) rows[static_cast<size_t>(r)] = data.data() + static_cast<size_t>(r) * rowBytes;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    throw std::runtime_error("libpng could not write " + path);
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), sixteenBits ? 16 : 8,
               types[channels], interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(file);
}

namespace {

// Writes `samples` with libjpeg, after `configure` has set the compression's parameters.
template <typename Configure>
void writeJpegWith(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
                   int quality, Configure configure) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot create " + path);
  jpeg_compress_struct cinfo;
  jpeg_error_mgr error;
  cinfo.err = jpeg_std_error(&error);  // exits the process on an error: these are the test's own pictures
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, file);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  configure(cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(samples.data()) + static_cast<size_t>(cinfo.next_scanline) * width * channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(file);
}

}  // namespace

void writeJpeg(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
               int quality) {
  writeJpegWith(path, width, height, channels, samples, quality, [](jpeg_compress_struct&) {});
}

void writeProgressiveJpeg(const std::string& path, int width, int height, const std::vector<uint8_t>& samples,
                          bool scanPerCoefficient) {
  // Outlives the compression, which reads the script as it writes.
  std::vector<jpeg_scan_info> scans;
  writeJpegWith(path, width, height, 3, samples, 90, [&](jpeg_compress_struct& cinfo) {
    if (!scanPerCoefficient) {
      jpeg_simple_progression(&cinfo);
      return;
    }
    scans.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 0});  // every component's DC coefficients
    for (int c = 0; c < 3; ++c)
      for (int k = 1; k < 64; ++k) scans.push_back({1, {c, 0, 0, 0}, k, k, 0, 0});
    cinfo.scan_info = scans.data();
    cinfo.num_scans = static_cast<int>(scans.size());
  });
}

}  // namespace nn::test

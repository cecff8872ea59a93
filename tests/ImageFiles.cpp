#include "tests/ImageFiles.h"

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

void writeJpeg(const std::string& path, int width, int height, int channels, const std::vector<uint8_t>& samples,
               int quality) {
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
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(samples.data()) + static_cast<size_t>(cinfo.next_scanline) * width * channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(file);
}

}  // namespace nn::test

// The decoders. libpng and libjpeg report errors by longjmp, which must not cross C++ frames
// with destructors: each library call runs in a function of its own (pngRead, jpegRead) whose
// only locals are plain data, and the error's text comes back to C++ in a buffer.
#include "nn/data/Image.h"

#include <fcntl.h>
#include <jerror.h>
#include <jpeglib.h>
#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <utility>

#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// What a decoder reports back: sizes, and the error where there was one.
struct Decoded {
  int64_t height = 0, width = 0, channels = 0;
  char error[JMSG_LENGTH_MAX + 200] = "";
  // The error is that the bytes ended before what was asked for was read.
  bool endedEarly = false;
};

bool hasPrefix(const std::string& bytes, const char* prefix, size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), prefix, n) == 0;
}

// Refuses a picture larger than the limit (before its memory is asked for).
bool tooLarge(Decoded& d, uint64_t width, uint64_t height, int64_t maxPixels) {
  if (width == 0 || height == 0 || width > static_cast<uint64_t>(maxPixels) ||
      height > static_cast<uint64_t>(maxPixels) / width) {
    std::snprintf(d.error, sizeof d.error, "declares %llu x %llu pixels; at most %lld are accepted",
                  static_cast<unsigned long long>(width), static_cast<unsigned long long>(height),
                  static_cast<long long>(maxPixels));
    return true;
  }
  return false;
}

// --- PNG -------------------------------------------------------------------------------

struct PngSource {
  const unsigned char* data;
  size_t size, at;
  Decoded* decoded;
};

void pngReadData(png_structp png, png_bytep out, png_size_t n) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > source->size - source->at) {
    source->decoded->endedEarly = true;
    png_error(png, "the file ends early");
  }
  std::memcpy(out, source->data + source->at, n);
  source->at += n;
}

void pngError(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  std::snprintf(source->decoded->error, sizeof source->decoded->error, "%s", message);
  png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp) {}

// Decodes (or, with pixels null, reads the header of) a PNG into d and *pixels.
void pngRead(const std::string& bytes, int64_t maxPixels, Decoded& d, std::vector<uint8_t>* pixels) {
  PngSource source{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, &d};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, pngError, pngWarning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr) {
    std::snprintf(d.error, sizeof d.error, "libpng could not start");
    png_destroy_read_struct(&png, &info, nullptr);
    return;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return;
  }
  png_set_read_fn(png, &source, pngReadData);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (tooLarge(d, width, height, maxPixels)) png_longjmp(png, 1);
  const int colorType = png_get_color_type(png, info);
  if (colorType == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (colorType == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  d.width = width;
  d.height = height;
  d.channels = png_get_channels(png, info);
  if (pixels != nullptr) {
    const size_t rowBytes = png_get_rowbytes(png, info);
    if (rowBytes != static_cast<size_t>(d.width * d.channels)) png_error(png, "unexpected row size");
    pixels->resize(rowBytes * height);
    // Every row once per pass: an interlaced picture's passes fill in the same rows.
    for (int pass = 0; pass < passes; ++pass)
      for (png_uint_32 r = 0; r < height; ++r) png_read_row(png, pixels->data() + r * rowBytes, nullptr);
    png_read_end(png, nullptr);
  }
  png_destroy_read_struct(&png, &info, nullptr);
}

// --- JPEG ------------------------------------------------------------------------------

struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  Decoded* decoded;
};

void jpegErrorExit(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  char message[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, message);
  std::snprintf(error->decoded->error, sizeof error->decoded->error, "%s", message);
  std::longjmp(error->jump, 1);
}

// A corrupt-data warning (a truncated file among them) is an error: the picture would be
// partly grey.
void jpegWarning(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) reinterpret_cast<JpegError*>(cinfo->err)->decoded->endedEarly = true;
  jpegErrorExit(cinfo);
}

// Called as libjpeg reads each part of the input: a progressive picture of more than
// kMaxJpegScans scans is refused as its scans arrive, before they are all decoded.
void jpegProgress(j_common_ptr cinfo) {
  const auto* decompress = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (decompress->input_scan_number <= kMaxJpegScans) return;
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  std::snprintf(error->decoded->error, sizeof error->decoded->error,
                "has more than %d scans (a progressive JPEG's scans are each a pass over the whole picture)",
                kMaxJpegScans);
  std::longjmp(error->jump, 1);
}

void jpegRead(const std::string& bytes, int64_t maxPixels, Decoded& d, std::vector<uint8_t>* pixels) {
  jpeg_decompress_struct cinfo;
  JpegError error;
  cinfo.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = jpegErrorExit;
  error.manager.emit_message = jpegWarning;
  error.decoded = &d;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_progress_mgr progress;
  progress.progress_monitor = jpegProgress;
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  jpeg_read_header(&cinfo, TRUE);
  if (tooLarge(d, cinfo.image_width, cinfo.image_height, maxPixels)) std::longjmp(error.jump, 1);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    std::snprintf(d.error, sizeof d.error, "is a CMYK JPEG; grey and colour ones are read");
    std::longjmp(error.jump, 1);
  }
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  d.width = cinfo.image_width;
  d.height = cinfo.image_height;
  d.channels = cinfo.num_components == 1 ? 1 : 3;
  if (pixels != nullptr) {
    jpeg_start_decompress(&cinfo);
    const size_t rowBytes = static_cast<size_t>(d.width * d.channels);
    pixels->resize(rowBytes * static_cast<size_t>(d.height));
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = pixels->data() + cinfo.output_scanline * rowBytes;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
}

// Decodes `bytes` (or their header alone). Where the bytes end before the header does and
// `endedEarly` is given, sets it and returns an empty Image instead of the error.
Image decode(const std::string& bytes, const std::string& name, int64_t maxPixels, bool headerOnly,
             bool* endedEarly = nullptr) {
  NN_CHECK(maxPixels > 0, "nn::decodeImage: expected a positive pixel limit, got " << maxPixels);
  Decoded d;
  Image image;
  std::vector<uint8_t>* pixels = headerOnly ? nullptr : &image.pixels;
  if (hasPrefix(bytes, "\x89PNG\r\n\x1a\n", 8)) {
    // The sizes of the first chunk, IHDR, checked before libpng reads on (it reads up to the
    // pixel data before it reports them).
    if (bytes.size() >= 24 && bytes.compare(12, 4, "IHDR") == 0) {
      auto word = [&](size_t at) {
        uint32_t v = 0;
        for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
        return v;
      };
      tooLarge(d, word(16), word(20), maxPixels);
    }
    if (d.error[0] == '\0') pngRead(bytes, maxPixels, d, pixels);
  } else if (hasPrefix(bytes, "\xff\xd8\xff", 3)) {
    jpegRead(bytes, maxPixels, d, pixels);
  } else {
    NN_CHECK(false, name << ": not a PNG or JPEG file (" << bytes.size() << " bytes)");
  }
  if (d.error[0] != '\0' && d.endedEarly && endedEarly != nullptr) {
    *endedEarly = true;
    return image;
  }
  NN_CHECK(d.error[0] == '\0', name << ": cannot decode the picture: " << d.error);
  image.height = d.height;
  image.width = d.width;
  image.channels = d.channels;
  return image;
}

}  // namespace

Image decodeImage(const std::string& bytes, const std::string& name, int64_t maxPixels) {
  return decode(bytes, name, maxPixels, false);
}

Image decodeImageHeader(const std::string& bytes, const std::string& name, int64_t maxPixels) {
  return decode(bytes, name, maxPixels, true);
}

namespace {

// The first `limit` bytes of the regular file at `path` (all of them where it is shorter) and
// its size. A FIFO or a device is refused before anything is read: either could block for ever.
struct FilePart {
  std::string bytes;
  int64_t size = 0;
};

FilePart readPart(const std::string& path, int64_t limit) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  NN_CHECK(fd >= 0, path << ": cannot open the file: " << std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat info;
  NN_CHECK(fstat(fd, &info) == 0, path << ": cannot read the file: " << std::strerror(errno));
  NN_CHECK(S_ISREG(info.st_mode), path << ": not a regular file (a FIFO, a device or a folder)");
  FilePart part;
  part.size = info.st_size;
  part.bytes.resize(static_cast<size_t>(std::min<int64_t>(limit, part.size)));
  size_t got = 0;
  while (got < part.bytes.size()) {
    const ssize_t n = pread(fd, &part.bytes[got], part.bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    NN_CHECK(n >= 0, path << ": cannot read the file: " << std::strerror(errno));
    if (n == 0) break;  // the file shrank
    got += static_cast<size_t>(n);
  }
  part.bytes.resize(got);
  return part;
}

// The header from as few bytes of the file as hold it (64 KB, then more where metadata comes
// first, up to kImageMetadataBytes), with the file's size.
std::pair<Image, int64_t> headerOf(const std::string& path, int64_t maxPixels) {
  for (int64_t prefix = int64_t{64} << 10;; prefix *= 16) {
    prefix = std::min(prefix, kImageMetadataBytes);
    const FilePart part = readPart(path, prefix);
    bool endedEarly = false;
    Image header = decode(part.bytes, path, maxPixels, true, &endedEarly);
    if (!endedEarly) return {header, part.size};
    const auto read = static_cast<int64_t>(part.bytes.size());
    NN_CHECK(read < part.size,
             path << ": cannot decode the picture: the file ends before its header does (" << part.size << " bytes)");
    NN_CHECK(prefix < kImageMetadataBytes,
             path << ": the picture's header does not end within its first " << kImageMetadataBytes << " bytes");
  }
}

}  // namespace

int64_t maxImageFileBytes(int64_t height, int64_t width) {
  int64_t pixels = 0, bytes = 0;
  NN_CHECK(height >= 0 && width >= 0 && mulInto(height, width, pixels) && mulInto(pixels, 8, bytes) &&
               addInto(bytes, kImageMetadataBytes, bytes),
           "nn::maxImageFileBytes: expected the sizes of a picture, got " << height << " x " << width);
  return bytes;
}

namespace {

// The header, with the file's size checked against it.
Image checkedHeader(const std::string& path, int64_t maxPixels) {
  const auto [header, size] = headerOf(path, maxPixels);
  const int64_t bound = maxImageFileBytes(header.height, header.width);
  NN_CHECK(size <= bound, path << ": " << size << " bytes for a picture of " << header.width << " x " << header.height
                               << " pixels; at most " << bound << " are read");
  return header;
}

}  // namespace

Image readImageHeader(const std::string& path, int64_t maxPixels) { return checkedHeader(path, maxPixels); }

Image readImage(const std::string& path, int64_t maxPixels) {
  const Image header = checkedHeader(path, maxPixels);
  const FilePart whole = readPart(path, maxImageFileBytes(header.height, header.width));
  return decodeImage(whole.bytes, path, maxPixels);
}

Image convertChannels(const Image& image, int64_t channels) {
  NN_CHECK(channels == 1 || channels == 3, "nn::convertChannels: expected 1 or 3 channels, got " << channels);
  const int64_t from = image.channels;
  NN_CHECK(from >= 1 && from <= 4 && static_cast<int64_t>(image.pixels.size()) == image.height * image.width * from,
           "nn::convertChannels: a picture of " << from << " channels and " << image.pixels.size() << " samples for "
                                                << image.height << " x " << image.width);
  Image out{image.height, image.width, channels, {}};
  const int64_t n = image.height * image.width;
  out.pixels.resize(static_cast<size_t>(n * channels));
  const bool colour = from >= 3;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = &image.pixels[static_cast<size_t>(i * from)];
    uint8_t* q = &out.pixels[static_cast<size_t>(i * channels)];
    if (channels == 3) {
      for (int c = 0; c < 3; ++c) q[c] = colour ? p[c] : p[0];
    } else {
      // PIL's "L": ITU-R 601 luma in 16-bit fixed point, rounded.
      q[0] = colour ? static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16) : p[0];
    }
  }
  return out;
}

Tensor imageTensor(const Image& image) {
  const int64_t c = image.channels, h = image.height, w = image.width;
  NN_CHECK(static_cast<int64_t>(image.pixels.size()) == c * h * w,
           "nn::imageTensor: " << image.pixels.size() << " samples for " << c << " x " << h << " x " << w);
  Tensor t = Tensor::empty({c, h, w});
  float* out = t.data();
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < h * w; ++i)
      out[k * h * w + i] = static_cast<float>(image.pixels[static_cast<size_t>(i * c + k)]) / 255.0f;
  return t;
}

}  // namespace nn

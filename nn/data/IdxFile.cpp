// nn::IdxFile: the IDX reader, of plain or gzip-compressed files.
#include "nn/data/IdxFile.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Far above any data set stored in this format, and small enough that every size, and
// every count gzread returns, fits its type without overflow.
constexpr int64_t kMaxDataBytes = int64_t{1} << 31;

// A file read plainly or, where it starts with gzip's magic bytes, through zlib's inflate. The
// gzip stream must end properly: inflate checks the trailer's CRC-32 and length, and a stream
// cut short (its trailer dropped) is an error, not data that merely ends. (zlib's gzread
// reports neither a missing trailer nor, without it, a corrupted stream.)
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    // A FIFO or a device would block the read until someone writes to it, or forever.
    struct stat st;
    NN_CHECK(stat(path.c_str(), &st) == 0, path << ": cannot open: " << std::strerror(errno));
    NN_CHECK(S_ISREG(st.st_mode), path << ": not a regular file (a FIFO, a device or a folder): data sets are files");
    file_ = std::fopen(path.c_str(), "rb");
    NN_CHECK(file_ != nullptr, path << ": cannot open: " << std::strerror(errno));
    fillInput();
    gzip_ = stream_.avail_in >= 2 && input_[0] == 0x1f && input_[1] == 0x8b;
    if (gzip_) NN_CHECK(inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK, path << ": cannot start zlib");
  }
  ~Reader() {
    if (gzip_) inflateEnd(&stream_);
    std::fclose(file_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// Reads up to `count` bytes; fewer only where the data ends. A read error (a corrupt or
  /// truncated gzip stream, a folder) is an nn::Error.
  int64_t read(void* destination, int64_t count) {
    auto* out = static_cast<uint8_t*>(destination);
    int64_t got = 0;
    while (got < count) {
      const int64_t n = gzip_ ? inflateSome(out + got, count - got) : copySome(out + got, count - got);
      if (n == 0) break;
      got += n;
    }
    return got;
  }

  /// True once the data has ended (a gzip stream with its trailer checked).
  bool ended() {
    if (gzip_) return ended_;
    if (stream_.avail_in == 0) fillInput();
    return stream_.avail_in == 0;
  }

 private:
  void fillInput() {
    const size_t n = std::fread(input_, 1, sizeof input_, file_);
    NN_CHECK(n > 0 || !std::ferror(file_), path_ << ": read error: " << std::strerror(errno));
    stream_.next_in = input_;
    stream_.avail_in = static_cast<uInt>(n);
  }

  int64_t copySome(uint8_t* out, int64_t count) {
    if (stream_.avail_in == 0) fillInput();
    const int64_t n = std::min<int64_t>(count, stream_.avail_in);
    std::memcpy(out, stream_.next_in, static_cast<size_t>(n));
    stream_.next_in += n;
    stream_.avail_in -= static_cast<uInt>(n);
    return n;
  }

  int64_t inflateSome(uint8_t* out, int64_t count) {
    if (ended_) return 0;
    stream_.next_out = out;
    stream_.avail_out = static_cast<uInt>(std::min<int64_t>(count, int64_t{1} << 30));
    const uInt before = stream_.avail_out;
    while (stream_.avail_out == before) {
      if (stream_.avail_in == 0) {
        fillInput();
        NN_CHECK(stream_.avail_in > 0,
                 path_ << ": truncated: the gzip stream ends before its end (its trailer, with the CRC, is missing)");
      }
      const int status = inflate(&stream_, Z_NO_FLUSH);
      NN_CHECK(status == Z_OK || status == Z_STREAM_END,
               path_ << ": corrupt gzip stream: " << (stream_.msg != nullptr ? stream_.msg : zError(status)));
      if (status == Z_STREAM_END) {
        ended_ = true;
        if (stream_.avail_in == 0) fillInput();
        NN_CHECK(stream_.avail_in == 0, path_ << ": bytes after the end of the gzip stream");
        break;
      }
    }
    return static_cast<int64_t>(before - stream_.avail_out);
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  bool gzip_ = false;
  bool ended_ = false;
  z_stream stream_{};
  uint8_t input_[1 << 16];
};

std::string hexByte(uint8_t b) {
  std::ostringstream s;
  s << "0x" << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(b);
  return s.str();
}

// Reads and checks the header: the sizes, whose product (the bytes of data) goes to *total.
std::vector<int64_t> readHeader(Reader& file, const std::string& path, const std::string& contents, int64_t* total) {
  uint8_t magic[4];
  int64_t got = file.read(magic, 4);
  NN_CHECK(got == 4, path << ": truncated: expected a 4-byte IDX magic number, got " << got << " bytes");
  NN_CHECK(magic[0] == 0 && magic[1] == 0,
           path << ": not an IDX file: the magic number should start with 0x00 0x00, got " << hexByte(magic[0]) << " "
                << hexByte(magic[1]));
  NN_CHECK(magic[2] == 0x08,
           path << ": unsupported IDX data type " << hexByte(magic[2]) << ", expected 0x08 (unsigned byte)");
  const int rank = magic[3];
  NN_CHECK(rank >= 1 && rank <= 4, path << ": expected an IDX rank from 1 to 4, got " << rank);

  uint8_t sizeBytes[16];
  got = file.read(sizeBytes, 4 * rank);
  NN_CHECK(got == 4 * rank,
           path << ": truncated: expected " << 4 * rank << " bytes of sizes for rank " << rank << ", got " << got);
  std::vector<int64_t> sizes;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* b = sizeBytes + 4 * d;
    sizes.push_back((int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]});
  }
  *total = 1;
  for (int64_t size : sizes) {
    // total <= 2^31 and size < 2^32 here, so the product cannot overflow.
    *total *= size;
    NN_CHECK(*total <= kMaxDataBytes, path << ": sizes " << shapeString(sizes) << " declare more than " << kMaxDataBytes
                                           << " bytes of " << contents);
  }
  return sizes;
}

}  // namespace

std::vector<int64_t> IdxFile::readSizes(const std::string& path, const std::string& contents) {
  Reader file(path);
  int64_t total = 0;
  return readHeader(file, path, contents, &total);
}

IdxFile IdxFile::read(const std::string& path, const std::string& contents) {
  Reader file(path);
  IdxFile out;
  int64_t total = 0;
  out.sizes = readHeader(file, path, contents, &total);

  // The buffer grows with the data that arrives (at most doubling), not to the declared size
  // at once: a short file that declares 2 GB must not cost 2 GB of memory to reject.
  int64_t got = 0;
  while (got < total) {
    const int64_t chunk = std::min(total - got, std::max<int64_t>(got, int64_t{1} << 16));
    out.data.resize(static_cast<size_t>(got + chunk));
    const int64_t n = file.read(out.data.data() + got, chunk);
    got += n;
    if (n < chunk) break;
  }
  NN_CHECK(got == total, path << ": truncated: expected " << total << " bytes of " << contents << ", got " << got);
  uint8_t rest[4096];
  int64_t trailing = 0;
  for (int64_t n; (n = file.read(rest, sizeof rest)) > 0;) trailing += n;
  NN_CHECK(trailing == 0, path << ": " << trailing << " trailing bytes after the " << total << " bytes of " << contents
                               << " that sizes " << shapeString(out.sizes) << " declare");
  // Reading on to the end checks a gzip stream's trailer (its CRC and length) too.
  NN_CHECK(file.ended(), path << ": the data does not end where sizes " << shapeString(out.sizes) << " say");
  return out;
}

}  // namespace nn

// nn::IdxFile: the IDX reader, through zlib's gzread (which passes plain files through).
#include "nn/IdxFile.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iomanip>

#include "nn/Error.h"

namespace nn {

namespace {

// Far above any data set stored in this format, and small enough that every size, and
// every count gzread returns, fits its type without overflow.
constexpr int64_t kMaxDataBytes = int64_t{1} << 31;

// A gzFile that closes itself and reads exactly what was asked, or less at the end.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    NN_CHECK(file_ != nullptr, path << ": cannot open: " << (errno != 0 ? std::strerror(errno) : "gzopen failed"));
  }
  ~GzReader() { gzclose(file_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  /// Reads up to `count` bytes; fewer only where the data ends. A read error (a corrupt
  /// gzip stream, a folder) is an nn::Error.
  int64_t read(void* destination, int64_t count) {
    int64_t got = 0;
    while (got < count) {
      const auto chunk = static_cast<unsigned>(std::min<int64_t>(count - got, int64_t{1} << 30));
      const int n = gzread(file_, static_cast<char*>(destination) + got, chunk);
      NN_CHECK(n >= 0, path_ << ": read error: " << problem());
      if (n == 0) break;
      got += n;
    }
    return got;
  }

  /// zlib's account of a stream that ended early ("unexpected end of file"), or "".
  std::string problem() {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (code == Z_OK) return "";
    if (code == Z_ERRNO) return std::strerror(errno);
    // zlib puts the path in front of its message; ours is already there.
    const std::string text = message;
    return text.rfind(path_ + ": ", 0) == 0 ? text.substr(path_.size() + 2) : text;
  }

  /// " (gzip: ...)" when zlib saw a problem, for the end of a message.
  std::string problemSuffix() {
    const std::string p = problem();
    return p.empty() ? "" : " (gzip: " + p + ")";
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

std::string hexByte(uint8_t b) {
  std::ostringstream s;
  s << "0x" << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(b);
  return s.str();
}

}  // namespace

IdxFile IdxFile::read(const std::string& path, const std::string& contents) {
  GzReader file(path);
  uint8_t magic[4];
  int64_t got = file.read(magic, 4);
  NN_CHECK(got == 4,
           path << ": truncated: expected a 4-byte IDX magic number, got " << got << " bytes" << file.problemSuffix());
  NN_CHECK(magic[0] == 0 && magic[1] == 0,
           path << ": not an IDX file: the magic number should start with 0x00 0x00, got " << hexByte(magic[0]) << " "
                << hexByte(magic[1]));
  NN_CHECK(magic[2] == 0x08,
           path << ": unsupported IDX data type " << hexByte(magic[2]) << ", expected 0x08 (unsigned byte)");
  const int rank = magic[3];
  NN_CHECK(rank >= 1 && rank <= 4, path << ": expected an IDX rank from 1 to 4, got " << rank);

  uint8_t sizeBytes[16];
  got = file.read(sizeBytes, 4 * rank);
  NN_CHECK(got == 4 * rank, path << ": truncated: expected " << 4 * rank << " bytes of sizes for rank " << rank
                                 << ", got " << got << file.problemSuffix());
  IdxFile out;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* b = sizeBytes + 4 * d;
    out.sizes.push_back((int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]});
  }
  int64_t total = 1;
  for (int64_t size : out.sizes) {
    // total <= 2^31 and size < 2^32 here, so the product cannot overflow.
    total *= size;
    NN_CHECK(total <= kMaxDataBytes, path << ": sizes " << shapeString(out.sizes) << " declare more than "
                                          << kMaxDataBytes << " bytes of " << contents);
  }

  // The buffer grows with the data that arrives (at most doubling), not to the declared size
  // at once: a short file that declares 2 GB must not cost 2 GB of memory to reject.
  got = 0;
  while (got < total) {
    const int64_t chunk = std::min(total - got, std::max<int64_t>(got, int64_t{1} << 16));
    out.data.resize(static_cast<size_t>(got + chunk));
    const int64_t n = file.read(out.data.data() + got, chunk);
    got += n;
    if (n < chunk) break;
  }
  NN_CHECK(got == total, path << ": truncated: expected " << total << " bytes of " << contents << ", got " << got
                              << file.problemSuffix());
  uint8_t rest[4096];
  int64_t trailing = 0;
  for (int64_t n; (n = file.read(rest, sizeof rest)) > 0;) trailing += n;
  NN_CHECK(trailing == 0, path << ": " << trailing << " trailing bytes after the " << total << " bytes of " << contents
                               << " that sizes " << shapeString(out.sizes) << " declare");
  // A gzip stream cut just before its trailer delivers all data, then reports the cut.
  const std::string problem = file.problem();
  NN_CHECK(problem.empty(), path << ": truncated: " << problem);
  return out;
}

}  // namespace nn

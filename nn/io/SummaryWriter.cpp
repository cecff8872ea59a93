// TensorBoard's record framing and the few protobuf fields of an Event that a scalar needs,
// written by hand: tensorflow/core/util/event.proto's Event {double wall_time = 1; int64 step =
// 2; string file_version = 3; Summary summary = 5}, Summary {repeated Value value = 1}, Value
// {string tag = 1; float simple_value = 2}. Little-endian, as protobuf's fixed-width fields are.
#include "nn/io/SummaryWriter.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

std::array<uint32_t, 256> crcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;  // reflected Castagnoli
    table[i] = c;
  }
  return table;
}

// TensorFlow's masked CRC, so that a CRC of data holding CRCs is not trivially related.
uint32_t maskedCrc(const std::string& bytes) {
  const uint32_t crc = crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void appendFixed(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

void appendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

// Field `number` of wire type 2 (length-delimited): a string or an embedded message.
void appendBytes(std::string& out, int number, const std::string& bytes) {
  appendVarint(out, static_cast<uint64_t>(number) << 3 | 2);
  appendVarint(out, bytes.size());
  out += bytes;
}

std::string eventHeader(double wallTime, int64_t step) {
  std::string event;
  uint64_t bits;
  std::memcpy(&bits, &wallTime, sizeof bits);
  appendVarint(event, 1 << 3 | 1);  // wall_time, 64-bit
  appendFixed(event, bits, 8);
  appendVarint(event, 2 << 3 | 0);  // step, varint (negative steps as two's complement, as protobuf's int64)
  appendVarint(event, static_cast<uint64_t>(step));
  return event;
}

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Where `text` is not UTF-8 (a stray byte, an overlong form, a surrogate, beyond U+10FFFF), the
// position of its first bad byte; -1 where it is.
int64_t firstNonUtf8(const std::string& text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    size_t length = 1;
    unsigned char low = 0x80, high = 0xbf;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      if (c == 0xe0) low = 0xa0;   // no overlong forms
      if (c == 0xed) high = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      if (c == 0xf0) low = 0x90;   // no overlong forms
      if (c == 0xf4) high = 0x8f;  // nothing beyond U+10FFFF
    } else {
      return static_cast<int64_t>(i);
    }
    if (n - i < length || p[i + 1] < low || p[i + 1] > high) return static_cast<int64_t>(i);
    for (size_t k = 2; k < length; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xbf) return static_cast<int64_t>(i);
    i += length;
  }
  return -1;
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = crcTable();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

SummaryWriter::SummaryWriter(const std::string& logdir) {
  NN_CHECK(!logdir.empty(), "nn::SummaryWriter: expected a folder, got an empty path");
  std::error_code error;
  std::filesystem::create_directories(logdir, error);
  NN_CHECK(!error && std::filesystem::is_directory(logdir),
           "nn::SummaryWriter: cannot make the folder " << logdir << (error ? ": " + error.message() : std::string()));
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  // Seconds, host and process, then a count of the process's writers (PyTorch's writer names
  // its files so): two writers of one process in the same second, or a name another process
  // took, each get a file of their own.
  static std::atomic<int64_t> writers{0};
  const std::string stem = logdir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(now())) + "." + host +
                           "." + std::to_string(getpid()) + ".";
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = stem + std::to_string(writers++);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  NN_CHECK(fd_ >= 0, "nn::SummaryWriter: cannot create " << path_ << ": " << std::strerror(errno));
  std::string event = eventHeader(now(), 0);
  appendBytes(event, 3, "brain.Event:2");
  writeRecord(event);
}

SummaryWriter::~SummaryWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SummaryWriter::addScalar(const std::string& tag, double value, int64_t step) {
  addScalar(tag, value, step, now());
}

void SummaryWriter::addScalar(const std::string& tag, double value, int64_t step, double wallTime) {
  NN_CHECK(!tag.empty(), "nn::SummaryWriter::addScalar: expected a tag, got an empty one");
  // TensorBoard's reader refuses a whole file that holds one tag of another encoding.
  const int64_t bad = firstNonUtf8(tag);
  NN_CHECK(bad < 0, "nn::SummaryWriter::addScalar: expected a UTF-8 tag, got byte 0x"
                        << std::hex << static_cast<int>(static_cast<unsigned char>(tag[static_cast<size_t>(bad)]))
                        << std::dec << " at position " << bad << " of '" << tag.substr(0, static_cast<size_t>(bad))
                        << "...'");
  std::string summaryValue;
  appendBytes(summaryValue, 1, tag);
  const float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  appendVarint(summaryValue, 2 << 3 | 5);  // simple_value, 32-bit
  appendFixed(summaryValue, bits, 4);
  std::string summary;
  appendBytes(summary, 1, summaryValue);
  std::string event = eventHeader(wallTime, step);
  appendBytes(event, 5, summary);
  writeRecord(event);
}

void SummaryWriter::writeRecord(const std::string& event) {
  std::string length;
  appendFixed(length, event.size(), 8);
  std::string record = length;
  appendFixed(record, maskedCrc(length), 4);
  record += event;
  appendFixed(record, maskedCrc(event), 4);
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    NN_CHECK(n > 0, "nn::SummaryWriter: cannot write " << path_ << ": " << std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace nn

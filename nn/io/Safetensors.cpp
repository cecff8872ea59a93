// nn::writeSafetensors and nn::readSafetensors: the safetensors format, every length, offset,
// dtype and shape of a file checked before it is used.
#include "nn/io/Serialize.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include "nn/io/AtomicFile.h"
#include "nn/io/JsonChecks.h"
#include "nn/math/Half.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

using io::brief;
using io::checkJsonCost;
using io::Json;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this code writes and reads host floats as they are");

// safetensors' own limit: a larger header is taken for a corrupted length.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
constexpr const char* kMetadataKey = "__metadata__";
// A safetensors header nests three levels deep ({name: {"shape": [...]}}); a few more are
// allowed (its values: kMaxJsonValues).
constexpr int kMaxHeaderDepth = 8;

std::string errnoText() { return std::strerror(errno); }

// A file opened for reading, closed on every path out.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    fd_ = open(path.c_str(), O_RDONLY);
    NN_CHECK(fd_ >= 0, path << ": cannot open: " << errnoText());
    struct stat info;
    const std::string problem = fstat(fd_, &info) != 0   ? errnoText()
                                : !S_ISREG(info.st_mode) ? "not a regular file"
                                                         : "";
    if (!problem.empty()) {
      // The destructor does not run for a constructor that throws.
      close(fd_);
      throw Error(path + ": cannot read: " + problem);
    }
    size_ = static_cast<uint64_t>(info.st_size);
  }
  ~InputFile() { close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }

  /// Reads exactly `bytes` at `offset`; `what` names them if the file turns out shorter.
  void read(void* data, uint64_t bytes, uint64_t offset, const std::string& what) {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
      const ssize_t n = pread(fd_, p, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      NN_CHECK(n >= 0, path_ << ": cannot read " << what << ": " << errnoText());
      NN_CHECK(n > 0, path_ << ": truncated while reading " << what);
      p += n;
      offset += static_cast<uint64_t>(n);
      bytes -= static_cast<uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The element types of safetensors files that PyTorch writes, all read as float32.
enum class FileDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

struct DtypeInfo {
  FileDtype dtype;
  const char* name;
  uint64_t bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {FileDtype::F64, "F64", 8}, {FileDtype::F32, "F32", 4}, {FileDtype::F16, "F16", 2}, {FileDtype::BF16, "BF16", 2},
    {FileDtype::I64, "I64", 8}, {FileDtype::I32, "I32", 4}, {FileDtype::I16, "I16", 2}, {FileDtype::I8, "I8", 1},
    {FileDtype::U8, "U8", 1},   {FileDtype::BOOL, "BOOL", 1},
};

const DtypeInfo* findDtype(const std::string& name) {
  for (const DtypeInfo& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::string dtypeNames() {
  std::string names;
  for (const DtypeInfo& d : kDtypes) names += std::string(names.empty() ? "" : ", ") + d.name;
  return names;
}

struct TensorEntry {
  std::string name;
  const DtypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> entries;
  Metadata metadata;
  uint64_t dataStart = 0;
};

// One tensor's header entry, checked against the data section's size.
TensorEntry parseEntry(const std::string& name, const Json& value, uint64_t dataBytes, const std::string& path) {
  const std::string where = path + ": tensor '" + name + "': ";
  NN_CHECK(value.is_object(), where << "expected {\"dtype\", \"shape\", \"data_offsets\"}, got " << brief(value));
  NN_CHECK(value.contains("dtype") && value["dtype"].is_string(), where << "missing dtype");
  const std::string dtype = value["dtype"].get<std::string>();
  TensorEntry entry;
  entry.name = name;
  entry.dtype = findDtype(dtype);
  NN_CHECK(entry.dtype != nullptr, where << "dtype " << brief(value["dtype"]) << " is not supported, expected one of "
                                         << dtypeNames());
  NN_CHECK(value.contains("data_offsets") && value["data_offsets"].is_array() && value["data_offsets"].size() == 2 &&
               value["data_offsets"][0].is_number_unsigned() && value["data_offsets"][1].is_number_unsigned(),
           where << "expected data_offsets [begin, end], got "
                 << (value.contains("data_offsets") ? brief(value["data_offsets"]) : "none"));
  entry.begin = value["data_offsets"][0].get<uint64_t>();
  entry.end = value["data_offsets"][1].get<uint64_t>();
  NN_CHECK(entry.begin <= entry.end && entry.end <= dataBytes,
           where << "data_offsets [" << entry.begin << ", " << entry.end << "] lie outside the data section of "
                 << dataBytes << " bytes (a truncated file?)");

  NN_CHECK(value.contains("shape") && value["shape"].is_array(), where << "missing shape");
  for (const Json& d : value["shape"]) {
    NN_CHECK(d.is_number_unsigned() && d.get<uint64_t>() <= (uint64_t{1} << 62),
             where << "expected a shape of non-negative integers, got " << brief(value["shape"]));
    entry.shape.push_back(d.get<int64_t>());
  }
  // The shape's size in bytes, saturated at 2^62 (no file is that large), so that the
  // product cannot overflow.
  constexpr uint64_t kSaturated = uint64_t{1} << 62;
  uint64_t bytes = entry.dtype->bytes;
  for (int64_t size : entry.shape) {
    const auto s = static_cast<uint64_t>(size);
    bytes = s != 0 && bytes > kSaturated / s ? kSaturated : bytes * s;
  }
  NN_CHECK(bytes == entry.end - entry.begin, where << "data_offsets [" << entry.begin << ", " << entry.end << "] hold "
                                                   << entry.end - entry.begin << " bytes, but shape "
                                                   << shapeString(entry.shape) << " of " << entry.dtype->name << " needs "
                                                   << (bytes == kSaturated ? "more than 2^62" : std::to_string(bytes)));
  // Sizes of 0 hide the others from the byte count above, but the tensor's strides still
  // multiply them: counted as 1, they must not exceed what a tensor can hold.
  int64_t extent = 0;
  NN_CHECK(extentOf(entry.shape.data(), entry.shape.size(), extent), where << "shape " << shapeString(entry.shape)
                                                                           << " is too large: a tensor holds at most "
                                                                           << kMaxElements << " elements");
  return entry;
}

// The header, with every entry checked and the tensors' data shown to tile the data section
// exactly: no overlap, no gap, nothing after the last tensor. Entries come sorted by offset.
Header readHeader(InputFile& file, const std::string& path) {
  NN_CHECK(file.size() >= 8, path << ": truncated: " << file.size()
                                  << " bytes, too short for the 8-byte header length of a safetensors file");
  uint8_t lengthBytes[8];
  file.read(lengthBytes, 8, 0, "the header length");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | lengthBytes[i];
  NN_CHECK(length <= kMaxHeaderBytes, path << ": header length " << length << " is over the limit of "
                                           << kMaxHeaderBytes << " bytes: not a safetensors file, or corrupted");
  NN_CHECK(length <= file.size() - 8, path << ": truncated: the header length says " << length
                                           << " bytes, the file has " << file.size() - 8 << " after it");
  std::string text(length, ' ');
  file.read(&text[0], length, 8, "the header");
  checkJsonCost(text, kMaxHeaderDepth, path + ": the header");
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(path + ": the header is not valid JSON: " + e.what());
  }
  NN_CHECK(json.is_object(), path << ": expected a JSON object as header, got " << json.type_name());

  Header header;
  header.dataStart = 8 + length;
  const uint64_t dataBytes = file.size() - header.dataStart;
  for (const auto& item : json.items()) {
    if (item.key() != kMetadataKey) {
      header.entries.push_back(parseEntry(item.key(), item.value(), dataBytes, path));
      continue;
    }
    NN_CHECK(item.value().is_object(), path << ": expected __metadata__ to be an object, got " << brief(item.value()));
    for (const auto& m : item.value().items()) {
      NN_CHECK(m.value().is_string(),
               path << ": metadata '" << m.key() << "': expected a string, got " << brief(m.value()));
      header.metadata[m.key()] = m.value().get<std::string>();
    }
  }

  std::stable_sort(header.entries.begin(), header.entries.end(),
                   [](const TensorEntry& a, const TensorEntry& b) { return a.begin < b.begin; });
  uint64_t covered = 0;
  for (const TensorEntry& e : header.entries) {
    NN_CHECK(e.begin == covered, path << ": tensor '" << e.name << "': data_offsets [" << e.begin << ", " << e.end
                                      << "] " << (e.begin < covered ? "overlap" : "leave a gap after")
                                      << " the previous tensor's data, which ends at " << covered);
    covered = e.end;
  }
  NN_CHECK(covered == dataBytes, path << ": " << dataBytes - covered << " bytes after the last tensor's data");
  return header;
}

// Element i of a little-endian array of `T` at `bytes`.
template <typename T>
T elementAt(const uint8_t* bytes, size_t i) {
  T value;
  std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
  return value;
}

// float64 to the nearest float32, ties to even, where C++ leaves the conversion of a value
// beyond float32's range undefined: from FLT_MAX plus half its last place on, infinity.
float narrowDouble(double x) {
  constexpr double kOverflow = 0x1.ffffffp+127;
  if (std::fabs(x) >= kOverflow) return x > 0 ? HUGE_VALF : -HUGE_VALF;
  return static_cast<float>(x);
}

// n elements of type `dtype` at `bytes` as float32: floating values rounded to nearest (exact
// but for F64), integers rounded to the nearest float32 (exact up to 2^24), BOOL's bytes as 0
// or 1 (any byte but zero as true, as NumPy reads them).
void toFloats(FileDtype dtype, const uint8_t* bytes, size_t n, float* out) {
  switch (dtype) {
    case FileDtype::F64:
      for (size_t i = 0; i < n; ++i) out[i] = narrowDouble(elementAt<double>(bytes, i));
      return;
    case FileDtype::F32:
      std::memcpy(out, bytes, n * sizeof(float));
      return;
    case FileDtype::F16:
      for (size_t i = 0; i < n; ++i) out[i] = math::halfToFloat(elementAt<uint16_t>(bytes, i));
      return;
    case FileDtype::BF16:
      for (size_t i = 0; i < n; ++i) out[i] = math::bfloat16ToFloat(elementAt<uint16_t>(bytes, i));
      return;
    case FileDtype::I64:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(elementAt<int64_t>(bytes, i));
      return;
    case FileDtype::I32:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(elementAt<int32_t>(bytes, i));
      return;
    case FileDtype::I16:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(elementAt<int16_t>(bytes, i));
      return;
    case FileDtype::I8:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int8_t>(bytes[i]));
      return;
    case FileDtype::U8:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(bytes[i]);
      return;
    case FileDtype::BOOL:
      for (size_t i = 0; i < n; ++i) out[i] = bytes[i] != 0 ? 1.f : 0.f;
      return;
  }
}

// The tensor of `entry` as float32: F32 read in place, the other types through a buffer of
// at most kChunkBytes, so that a large F16 file needs no second copy of itself. With
// keepElementTypes, F16 and BF16 are read in place as tensors of their type.
Tensor readTensor(InputFile& file, const TensorEntry& entry, uint64_t dataStart, bool keepElementTypes) {
  const std::string what = "tensor '" + entry.name + "'";
  if (keepElementTypes && (entry.dtype->dtype == FileDtype::F16 || entry.dtype->dtype == FileDtype::BF16)) {
    Tensor t =
        Tensor::empty(entry.shape, Device(), entry.dtype->dtype == FileDtype::F16 ? DType::Float16 : DType::BFloat16);
    file.read(t.rawBytes(), entry.end - entry.begin, dataStart + entry.begin, what);
    return t;
  }
  Tensor t = Tensor::empty(entry.shape);
  if (entry.dtype->dtype == FileDtype::F32) {
    file.read(t.data(), entry.end - entry.begin, dataStart + entry.begin, what);
    return t;
  }
  constexpr uint64_t kChunkBytes = uint64_t{1} << 20;
  const uint64_t size = entry.dtype->bytes;
  std::vector<uint8_t> chunk(std::min(kChunkBytes, entry.end - entry.begin));
  float* out = t.data();
  for (uint64_t at = entry.begin; at < entry.end;) {
    const uint64_t bytes = std::min(kChunkBytes, entry.end - at);  // a multiple of the element's size
    file.read(chunk.data(), bytes, dataStart + at, what);
    toFloats(entry.dtype->dtype, chunk.data(), bytes / size, out);
    out += bytes / size;
    at += bytes;
  }
  return t;
}

}  // namespace

void writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors, const Metadata& metadata) {
  std::set<std::string> names;
  std::vector<Tensor> host;
  Json header = Json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    NN_CHECK(
        !t.name.empty() && t.name != kMetadataKey && names.insert(t.name).second,
        path << ": cannot save tensor '" << t.name << "': names must be unique, non-empty and not " << kMetadataKey);
    host.push_back(t.value.device().isCpu() ? t.value.contiguous() : t.value.to(Device()));
    const DType type = t.value.dtype();
    const uint64_t bytes = static_cast<uint64_t>(t.value.numel()) * static_cast<uint64_t>(elementSize(type));
    Json entry = Json::object();
    entry["dtype"] = type == DType::Float32 ? "F32" : type == DType::BFloat16 ? "BF16" : "F16";
    entry["shape"] = t.value.sizes();
    entry["data_offsets"] = {offset, offset + bytes};
    header[t.name] = entry;
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& e) {
    throw Error(path + ": cannot write the header (names and metadata must be UTF-8): " + e.what());
  }
  // Spaces (valid JSON whitespace) so that the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));

  AtomicFile file(path);
  file.write(length, sizeof length);
  file.write(text.data(), text.size());
  for (const Tensor& t : host) file.write(t.rawBytes(), static_cast<size_t>(t.numel() * elementSize(t.dtype())));
  file.commit();
}

SafetensorsContents readSafetensors(const std::string& path, bool keepElementTypes) {
  InputFile file(path);
  const Header header = readHeader(file, path);
  SafetensorsContents out;
  out.metadata = header.metadata;
  for (const TensorEntry& e : header.entries) {
    out.tensors.push_back({e.name, readTensor(file, e, header.dataStart, keepElementTypes)});
    out.dtypes.push_back(e.dtype->name);
  }
  return out;
}

Metadata readSafetensorsMetadata(const std::string& path) {
  InputFile file(path);
  return readHeader(file, path).metadata;
}

}  // namespace nn

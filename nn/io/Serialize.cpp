// nn::save and nn::load: the safetensors reader and writer, and the module tree in JSON.
#include "nn/io/Serialize.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "nn/core/Checked.h"
#include "nn/core/Container.h"
#include "nn/core/Error.h"
#include "nn/io/AtomicFile.h"
#include "nn/math/Half.h"

namespace nn {

namespace {

// Keeps the keys in the order written: tensors in stateDict order, config entries as given.
using Json = nlohmann::ordered_json;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this code writes and reads host floats as they are");

// safetensors' own limit: a larger header is taken for a corrupted length.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kModuleKey = "nn.module";
constexpr const char* kFormatKey = "format";
constexpr int kMaxTreeDepth = 100;
// Places of modules in a tree, a module in several places counted at each: far more than any
// network has, and few enough to walk. Modules shared at every level ("same_as") would otherwise
// double the places with each level of a few bytes.
constexpr int64_t kMaxTreePlaces = int64_t{1} << 20;
// A safetensors header nests three levels deep ({name: {"shape": [...]}}); a few more are
// allowed. Its values: a handful per tensor, far below this for any model.
constexpr int kMaxHeaderDepth = 8;
constexpr int64_t kMaxJsonValues = int64_t{1} << 22;
// A module tree nests two levels per module (the module and its children) and its config.
constexpr int kMaxTreeJsonDepth = 2 * kMaxTreeDepth + 4;

// Throws unless parsing `text` costs little: at most `maxDepth` levels of arrays and objects
// and kMaxJsonValues values. One pass over the bytes, before the parser builds anything: a
// 100 MB header of nested brackets or of zeros would otherwise take gigabytes to refuse.
void checkJsonCost(const std::string& text, int maxDepth, const std::string& what) {
  int depth = 0;
  int64_t values = 1;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        break;
      case '[':
      case '{':
        NN_CHECK(++depth <= maxDepth, what << " is nested more than " << maxDepth << " levels deep");
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ',':
        NN_CHECK(++values <= kMaxJsonValues, what << " holds more than " << kMaxJsonValues << " values");
        break;
      default:
        break;
    }
  }
}

std::string errnoText() { return std::strerror(errno); }

// ---------------------------------------------------------------------------------------
// Writing.

// ---------------------------------------------------------------------------------------
// Reading.

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

// Appends `value` as dump() writes it, stopping soon after `out` holds `limit` characters
// and writing containers nested deeper than kBriefDepth as [...] or {...}: dump() recurses
// once per level, and a corrupted header can nest millions of levels deep.
constexpr int kBriefDepth = 8;
void appendBrief(const Json& value, int depth, size_t limit, std::string& out) {
  if (!value.is_structured()) {
    out += value.dump();
    return;
  }
  const bool array = value.is_array();
  if (depth == kBriefDepth && !value.empty()) {
    out += array ? "[...]" : "{...}";
    return;
  }
  out += array ? '[' : '{';
  for (auto it = value.begin(); it != value.end() && out.size() <= limit; ++it) {
    if (it != value.begin()) out += ',';
    if (!array) out += Json(it.key()).dump() + ':';
    appendBrief(*it, depth + 1, limit, out);
  }
  out += array ? ']' : '}';
}

// A JSON value for an error message, cut short: a corrupted header can be 100 MB.
std::string brief(const Json& value) {
  constexpr size_t kLimit = 200;
  std::string text;
  appendBrief(value, 0, kLimit, text);
  return text.size() <= kLimit ? text : text.substr(0, kLimit) + "...";
}

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

// ---------------------------------------------------------------------------------------
// The module tree.

// The place of child i of the module at `where`, by indices ("2.0"): stateDict's names where no
// child is named.
std::string childPlace(const std::string& where, size_t i) {
  return where.empty() ? std::to_string(i) : where + "." + std::to_string(i);
}

// `where` is the module's place as in stateDict names ("" for the root, "2", "2.0"); `placed`
// the modules described so far, by place: a module used in two places is described at the
// first, and {"same_as": "0"} stands at the others.

Json describe(const Module& module, const std::string& where, std::map<const Module*, std::string>& placed) {
  const auto [first, isNew] = placed.emplace(&module, where);
  if (!isNew) {
    Json node = Json::object();
    node["same_as"] = first->second;
    return node;
  }
  Json config = Json::object();
  const Config moduleConfig = module.config();
  for (const auto& [key, value] : moduleConfig.values()) {
    if (const bool* b = std::get_if<bool>(&value)) {
      config[key] = *b;
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      config[key] = *i;
    } else if (const double* d = std::get_if<double>(&value)) {
      NN_CHECK(std::isfinite(*d), module.toString()
                                      << ": config entry '" << key << "' is not a finite number, cannot save it");
      config[key] = *d;
    } else if (const std::string* t = std::get_if<std::string>(&value)) {
      config[key] = *t;
    } else {
      config[key] = std::get<std::vector<int64_t>>(value);
    }
  }
  Json children = Json::array();
  const std::vector<ModulePtr>& kids = module.children();
  for (size_t i = 0; i < kids.size(); ++i) children.push_back(describe(*kids[i], childPlace(where, i), placed));
  Json node = Json::object();
  node["type"] = module.typeName();
  node["config"] = config;
  node["training"] = module.isTraining();
  node["children"] = children;
  if (const auto* container = dynamic_cast<const Container*>(&module))
    if (!container->childNames().empty()) {
      Json names = Json::array();
      for (const std::optional<std::string>& name : container->childNames())
        names.push_back(name ? Json(*name) : Json(nullptr));
      node["names"] = names;
    }
  return node;
}

// `where` as in describe; `built` the modules built so far, by place, which a "same_as" node
// names (only a module finished before it: a module cannot hold itself).
// `storageLeft`: the bytes that the leaves still to be built may allocate (see load).
// `places`: for each module built so far, the places it and the modules below it take.
ModulePtr build(const Json& node, const std::string& where, int depth, const std::string& source, int64_t& storageLeft,
                std::map<std::string, ModulePtr>& built, std::map<const Module*, int64_t>& places) {
  const std::string at = source + ": module tree: " + (where.empty() ? "root" : "module '" + where + "'") + ": ";
  // Far deeper than any network; a corrupted tree must not exhaust the stack.
  NN_CHECK(depth <= kMaxTreeDepth, at << "nested more than " << kMaxTreeDepth << " modules deep");
  if (node.is_object() && node.contains("same_as")) {
    NN_CHECK(node.size() == 1 && node["same_as"].is_string(),
             at << "expected {\"same_as\": string}, got " << brief(node));
    const auto found = built.find(node["same_as"].get<std::string>());
    NN_CHECK(found != built.end(),
             at << "\"same_as\" names " << brief(node["same_as"]) << ", not a module built before this one");
    return found->second;
  }
  NN_CHECK(node.is_object() && node.contains("type") && node["type"].is_string() && node.contains("config") &&
               node["config"].is_object() && node.contains("training") && node["training"].is_boolean() &&
               node.contains("children") && node["children"].is_array(),
           at << "expected {\"type\": string, \"config\": object, \"training\": bool, \"children\": list}, got "
              << brief(node));
  const std::string type = node["type"].get<std::string>();
  Config config;
  for (const auto& item : node["config"].items()) {
    const Json& v = item.value();
    const std::string where = at + type + " config entry '" + item.key() + "': ";
    if (v.is_boolean()) {
      config.set(item.key(), v.get<bool>());
    } else if (v.is_number_integer()) {
      NN_CHECK(!(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX), where << "integer out of range");
      config.set(item.key(), v.get<int64_t>());
    } else if (v.is_number_float()) {
      config.set(item.key(), v.get<double>());
    } else if (v.is_string()) {
      config.set(item.key(), v.get<std::string>());
    } else {
      NN_CHECK(v.is_array(), where << "expected a flag, a number, text or a list, got " << brief(v));
      std::vector<int64_t> values;
      for (const Json& x : v) {
        NN_CHECK(x.is_number_integer() && !(x.is_number_unsigned() && x.get<uint64_t>() > INT64_MAX),
                 where << "expected a list of integers, got " << brief(v));
        values.push_back(x.get<int64_t>());
      }
      config.set(item.key(), values);
    }
  }
  std::vector<ModulePtr> children;
  const Json& kids = node["children"];
  int64_t placesBelow = 1;
  for (size_t i = 0; i < kids.size(); ++i) {
    children.push_back(build(kids[i], childPlace(where, i), depth + 1, source, storageLeft, built, places));
    placesBelow += places.at(children.back().get());
    NN_CHECK(placesBelow <= kMaxTreePlaces, at << "the modules below take more than " << kMaxTreePlaces
                                               << " places (a module in several places counted at each)");
  }
  ModulePtr module;
  try {
    // A leaf allocates its parameters at the sizes its config gives; containers allocate
    // nothing of their own (a DataParallelTable copies its child, bounded by the child).
    std::optional<StorageLimit> limit;
    if (kids.empty())
      limit.emplace(storageLeft, "the module tree, which needs at most three times the bytes of the file's tensors");
    module = createModule(type, config, std::move(children));
    if (limit) storageLeft = limit->bytesLeft();
  } catch (const std::exception& e) {
    // Also std::bad_alloc from a corrupted size: the file is at fault, not the program.
    throw Error(at + "cannot build " + type + ": " + e.what());
  }
  const Config rebuilt = module->config();
  for (const auto& item : config.values())
    NN_CHECK(rebuilt.has(item.first), at << type << " has no config entry '" << item.first << "'");
  NN_CHECK(module->children().size() == kids.size(),
           at << type << " has " << module->children().size() << " children, the file lists " << kids.size());
  if (node.contains("names")) {
    auto* container = dynamic_cast<Container*>(module.get());
    const Json& names = node["names"];
    NN_CHECK(container != nullptr, at << type << " has no named children, but the file names them");
    NN_CHECK(names.is_array() && names.size() == kids.size(),
             at << "expected \"names\": a list of " << kids.size() << " names or nulls, got " << brief(names));
    std::vector<std::optional<std::string>> given;
    for (const Json& name : names) {
      NN_CHECK(name.is_null() || name.is_string(), at << "expected a name or null, got " << brief(name));
      given.push_back(name.is_null() ? std::nullopt : std::optional<std::string>(name.get<std::string>()));
    }
    container->setChildNames(given, at + type);
  }
  built.emplace(where, module);
  places.emplace(module.get(), placesBelow);
  return module;
}

// Top-down, because training() and evaluate() also set every child's mode. A module in two
// places takes its mode from the first; `described` gets each module and that mode, in order.
void applyModes(Module& module, const Json& node, std::vector<std::pair<Module*, bool>>& described) {
  if (node.contains("same_as")) return;
  const bool training = node["training"].get<bool>();
  described.emplace_back(&module, training);
  if (training)
    module.training();
  else
    module.evaluate();
  const std::vector<ModulePtr>& children = module.children();
  for (size_t i = 0; i < children.size(); ++i) applyModes(*children[i], node["children"][i], described);
}

void setModes(Module& root, const Json& tree) {
  std::vector<std::pair<Module*, bool>> described;
  applyModes(root, tree, described);
  // The container of a module's second place set it again, to its own mode: set back, in the
  // same order, until nothing changes (a few passes: the tree has no cycle).
  for (size_t pass = 0; pass < described.size(); ++pass) {
    bool changed = false;
    for (const auto& [module, training] : described)
      if (module->isTraining() != training) {
        changed = true;
        if (training)
          module->training();
        else
          module->evaluate();
      }
    if (!changed) break;
  }
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

std::string describeModuleTree(const Module& module) {
  std::map<const Module*, std::string> placed;
  return describe(module, "", placed).dump();
}

ModulePtr buildModuleTree(const std::string& description, const std::string& source, int64_t stateBytes) {
  checkJsonCost(description, kMaxTreeJsonDepth, source + ": module tree: the description");
  Json tree;
  try {
    tree = Json::parse(description);
  } catch (const Json::exception& e) {
    throw Error(source + ": the module tree is not valid JSON: " + e.what());
  }
  // A parameter takes its bytes three times while its module is built: its values, its
  // gradient and the temporary its initial values are drawn into; buffers take theirs once.
  // The slack covers the few bytes that an empty tensor's storage takes.
  constexpr int64_t kSlack = int64_t{1} << 20;
  int64_t storageLeft = 0;
  if (!mulInto(3, stateBytes, storageLeft) || !addInto(storageLeft, kSlack, storageLeft))
    storageLeft = INT64_MAX;  // saturated: no file is that large
  std::map<std::string, ModulePtr> built;
  std::map<const Module*, int64_t> places;
  ModulePtr module = build(tree, "", 0, source, storageLeft, built, places);
  setModes(*module, tree);
  return module;
}

bool isTrainingState(const std::string& name) { return name.rfind(kTrainingStatePrefix, 0) == 0; }

namespace {

// For each entry of `state`, the index of the first entry that holds the same tensor: itself,
// or an earlier place of a module in two places. A few hundred tensors at most: the quadratic
// search costs nothing.
std::vector<size_t> firstPlaces(const std::vector<NamedTensor>& state) {
  std::vector<size_t> first(state.size());
  for (size_t k = 0; k < state.size(); ++k) {
    first[k] = k;
    for (size_t j = 0; j < k; ++j)
      if (state[j].value.is(state[k].value)) {
        first[k] = j;
        break;
      }
  }
  return first;
}

// Equal sizes and equal bits (NaN equal to the same NaN, -0 not to +0): copies of one tensor.
bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const std::vector<float> x = a.toVector(), y = b.toVector();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

std::vector<NamedTensor> stateDictOnce(Module& module) {
  std::vector<NamedTensor> state = module.stateDict();
  const std::vector<size_t> first = firstPlaces(state);
  std::vector<NamedTensor> once;
  for (size_t k = 0; k < state.size(); ++k)
    if (first[k] == k) once.push_back(std::move(state[k]));
  return once;
}

namespace {

// The file's name for a tensor, after LoadOptions' prefixes and rename; empty to leave it out.
std::string renamed(const std::string& fileName, const LoadOptions& options) {
  std::string name = fileName;
  for (const auto& p : options.prefixes)
    if (name.compare(0, p.first.size(), p.first) == 0) {
      name = p.second + name.substr(p.first.size());
      break;
    }
  return options.rename ? options.rename(name) : name;
}

// Whether `name` (the module's) is PyTorch's batch count of a module that has running
// statistics but no count of its own: "<place>.num_batches_tracked" beside "<place>.running_mean".
bool isBatchCount(const std::string& name, const std::set<std::string>& moduleNames) {
  const std::string kCount = "num_batches_tracked";
  if (name.size() < kCount.size() || name.compare(name.size() - kCount.size(), kCount.size(), kCount) != 0)
    return false;
  const std::string place = name.substr(0, name.size() - kCount.size());
  if (!place.empty() && place.back() != '.') return false;
  return moduleNames.count(place + "running_mean") != 0 && moduleNames.count(name) == 0;
}

// " (the file's 'x')" where the file names the tensor otherwise.
std::string fileNote(const std::string& name, const std::string& fileName) {
  return name == fileName ? "" : " (the file's '" + fileName + "')";
}

struct Match {
  /// For each of module.stateDict()'s entries, the tensor to copy into it: null where nothing
  /// is (a module's second place, a tensor missing, mismatched or filtered out).
  std::vector<const Tensor*> sources;
  LoadReport report;
};

// What loadStateDict checks before it copies. Strict, it throws at the first tensor missing or
// of another shape (in the module's order), then at the first unexpected (in the file's);
// otherwise it reports them. A name given twice, and two different copies of a tensor of a
// module in two places, are errors either way.
Match matchStateDict(Module& module, const std::vector<NamedTensor>& all, const std::string& source,
                     const LoadOptions& options) {
  Match match;
  LoadReport& report = match.report;
  std::vector<NamedTensor> expected = module.stateDict();
  const std::vector<size_t> first = firstPlaces(expected);
  std::set<std::string> moduleNames;
  for (const NamedTensor& e : expected) moduleNames.insert(e.name);
  const auto takesPart = [&](const std::string& name) { return !options.filter || options.filter(name); };

  // The file's tensors by the module's names, pointers into `all`, which outlives the copies.
  std::map<std::string, std::pair<const Tensor*, std::string>> given;
  std::vector<std::pair<std::string, std::string>> order;  // (name, file name), as the file lists them
  for (const NamedTensor& t : all) {
    if (isTrainingState(t.name)) continue;
    const std::string name = renamed(t.name, options);
    if (name.empty()) {
      report.ignored.push_back({t.name, "renamed to nothing"});
      continue;
    }
    if (!takesPart(name)) {
      report.ignored.push_back({t.name, "left out by the filter" + fileNote(name, t.name)});
      continue;
    }
    if (isBatchCount(name, moduleNames)) {
      report.ignored.push_back({t.name, "PyTorch's batch count: BatchNormalization's momentum needs none"});
      continue;
    }
    const auto placed = given.emplace(name, std::make_pair(&t.value, t.name));
    NN_CHECK(placed.second, source << ": tensor '" << name << "' appears twice"
                                   << (placed.first->second.second == t.name
                                           ? std::string()
                                           : " (the file's '" + placed.first->second.second + "' and '" + t.name +
                                                 "')"));
    order.emplace_back(name, t.name);
  }

  match.sources.assign(expected.size(), nullptr);
  for (size_t k = 0; k < expected.size(); ++k) {
    const NamedTensor& e = expected[k];
    auto it = given.find(e.name);
    if (first[k] != k) {
      // Another place of a tensor met before: nn::save leaves it out, and a copy the file
      // holds must be the first place's.
      const std::string& firstName = expected[first[k]].name;
      auto firstIt = given.find(firstName);
      NN_CHECK(it == given.end() || firstIt == given.end() || sameBits(*it->second.first, *firstIt->second.first),
               source << ": tensors '" << firstName << "' and '" << e.name << "' are one tensor (a module in two "
                      << "places of " << module.typeName() << "), but the file holds two different copies of it");
      continue;
    }
    if (!takesPart(e.name)) continue;
    if (it == given.end()) {
      NN_CHECK(!options.strict, source << ": tensor '" << e.name << "' is missing (" << module.typeName()
                                       << " expects one of shape " << e.value.shapeString() << ")");
      report.missing.push_back(e.name);
      continue;
    }
    const Tensor& t = *it->second.first;
    if (t.sizes() != e.value.sizes()) {
      NN_CHECK(!options.strict, source << ": tensor '" << e.name << "'" << fileNote(e.name, it->second.second)
                                       << ": shape " << t.shapeString() << " in the file, but " << module.typeName()
                                       << " expects " << e.value.shapeString());
      report.mismatched.push_back({e.name, e.value.sizes(), t.sizes()});
      continue;
    }
    match.sources[k] = &t;
    report.loaded.push_back(e.name);
  }
  for (const auto& [name, fileName] : order) {
    if (moduleNames.count(name) != 0) continue;
    NN_CHECK(!options.strict, source << ": unexpected tensor '" << name << "'" << fileNote(name, fileName) << ": "
                                     << module.typeName() << " has no parameter or buffer of that name");
    report.unexpected.push_back(name);
  }
  return match;
}

}  // namespace

std::string LoadReport::toString() const {
  std::ostringstream out;
  out << "loaded " << loaded.size() << " tensors";
  const auto list = [&](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    out << "\n" << what << ":";
    for (const std::string& n : names) out << " " << n;
  };
  list("missing", missing);
  list("unexpected", unexpected);
  if (!mismatched.empty()) {
    out << "\nshapes differ:";
    for (const Mismatch& m : mismatched)
      out << " " << m.name << " (module " << shapeString(m.moduleShape) << ", file " << shapeString(m.fileShape) << ")";
  }
  for (const Ignored& i : ignored) out << "\nignored " << i.fileName << ": " << i.reason;
  return out.str();
}

void checkStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source) {
  matchStateDict(module, tensors, source, LoadOptions());
}

LoadReport loadStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source,
                         const LoadOptions& options) {
  Match match = matchStateDict(module, tensors, source, options);
  std::vector<NamedTensor> expected = module.stateDict();
  for (size_t k = 0; k < expected.size(); ++k)
    if (match.sources[k] != nullptr) expected[k].value.copy_(*match.sources[k]);
  return std::move(match.report);
}

void loadStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source) {
  loadStateDict(module, tensors, source, LoadOptions());
}

void save(Module& module, const std::string& path, const Metadata& extra) {
  for (const auto& item : extra)
    NN_CHECK(item.first != kFormatKey && item.first != kModuleKey,
             path << ": metadata key '" << item.first << "' is reserved for nn::save");
  Metadata metadata = extra;
  metadata[kFormatKey] = "pt";
  metadata[kModuleKey] = describeModuleTree(module);
  writeSafetensors(path, stateDictOnce(module), metadata);
}

ModulePtr load(const std::string& path) {
  const SafetensorsContents contents = readSafetensors(path);
  auto tree = contents.metadata.find(kModuleKey);
  NN_CHECK(tree != contents.metadata.end(), path << ": no '" << kModuleKey
                                                 << "' metadata: not written by nn::save (to load its tensors into "
                                                    "a module built in code, use nn::loadStateInto)");
  // The tensors tile the file's data section: their bytes add up to less than its size.
  int64_t stateBytes = 0;
  for (const NamedTensor& t : contents.tensors) stateBytes += t.value.numel() * static_cast<int64_t>(sizeof(float));
  ModulePtr module = buildModuleTree(tree->second, path, stateBytes);
  loadStateDict(*module, contents.tensors, path);
  return module;
}

LoadReport loadStateInto(Module& module, const std::string& path, const LoadOptions& options) {
  return loadStateDict(module, readSafetensors(path).tensors, path, options);
}

}  // namespace nn

// nn::readTorch7 and nn::loadTorch7: the reader of Torch7's binary serialization (the format is
// described in Torch7.h) and the mapping of Torch7's module classes onto this library's.
#include "nn/io/Torch7.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "nn/core/Config.h"
#include "nn/math/Half.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "Torch7 files are read as little-endian, the order of the machines that wrote them");

namespace {

// The type codes of File.lua's writeObject.
constexpr int32_t kNil = 0;
constexpr int32_t kNumber = 1;
constexpr int32_t kString = 2;
constexpr int32_t kTable = 3;
constexpr int32_t kTorch = 4;
constexpr int32_t kBoolean = 5;
constexpr int32_t kFunction = 6;
constexpr int32_t kLegacyRecursiveFunction = 7;
constexpr int32_t kRecursiveFunction = 8;

// Bounds for a hostile file: values nested deeper would use the stack up (each level is a
// call), tensors of more dimensions exist in no model, and what the reader builds (tables'
// entries, strings, converted storages) is charged to a budget proportional to the file.
constexpr int kMaxDepth = 200;
constexpr int32_t kMaxDims = 64;
constexpr size_t kMaxClassName = 1000;
constexpr int64_t kBudgetFactor = 32;
constexpr int64_t kBudgetExtra = int64_t{1} << 20;
// The modules' own storage (parameters, gradients, buffers): at most this many times the file's
// bytes, plus kBudgetExtra. A float weight takes 4 bytes in the file and 8 in its module (the
// value and its gradient); a byte storage's elements take 1 in the file.
constexpr int64_t kModuleStorageFactor = 8;
// A tree's modules counted at each of their places, and the places that building its containers
// walks (see ModuleBuilder::container): far above any model's, far below a hang.
constexpr int64_t kMaxPlaces = int64_t{1} << 20;
constexpr int64_t kMaxPlacesWalked = int64_t{1} << 24;

// The element types of Torch7's storages, all read as float32.
enum class Element { U8, I8, I16, I32, I64, F16, F32, F64 };

struct ElementType {
  const char* name;  // between "torch." (or "torch.Cuda") and "Tensor" or "Storage"
  Element element;
  int64_t bytes;
};

constexpr ElementType kElementTypes[] = {
    {"Byte", Element::U8, 1},  {"Char", Element::I8, 1},  {"Short", Element::I16, 2}, {"Int", Element::I32, 4},
    {"Long", Element::I64, 8}, {"Half", Element::F16, 2}, {"Float", Element::F32, 4}, {"Double", Element::F64, 8},
};

// A tensor or storage class: its element type, and whether it is a storage.
struct TensorClass {
  const ElementType* type = nullptr;
  bool storage = false;
  std::string storageName;  // for a tensor, the class of its storage
};

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// "torch.FloatTensor", "torch.LongStorage", "torch.CudaTensor" (float), "torch.CudaHalfStorage";
// nullopt for any other class.
std::optional<TensorClass> tensorClass(const std::string& name) {
  if (!startsWith(name, "torch.")) return std::nullopt;
  const bool storage = endsWith(name, "Storage");
  if (!storage && !endsWith(name, "Tensor")) return std::nullopt;
  std::string middle = name.substr(6, name.size() - 6 - (storage ? 7 : 6));
  const bool cuda = startsWith(middle, "Cuda");
  if (cuda) middle = middle.substr(4);
  // torch.CudaTensor holds floats; torch.Tensor and torch.Storage are no class of a file.
  if (cuda && middle.empty()) middle = "Float";
  for (const ElementType& t : kElementTypes)
    if (middle == t.name)
      return TensorClass{&t, storage, std::string("torch.") + (cuda ? "Cuda" : "") + (cuda && middle == "Float" ? "" : middle) + "Storage"};
  return std::nullopt;
}

template <typename T>
T loadAs(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

float elementAt(const char* p, Element element) {
  switch (element) {
    case Element::U8: return static_cast<float>(loadAs<uint8_t>(p));
    case Element::I8: return static_cast<float>(loadAs<int8_t>(p));
    case Element::I16: return static_cast<float>(loadAs<int16_t>(p));
    case Element::I32: return static_cast<float>(loadAs<int32_t>(p));
    case Element::I64: return static_cast<float>(loadAs<int64_t>(p));
    case Element::F16: return math::halfToFloat(loadAs<uint16_t>(p));
    case Element::F32: return loadAs<float>(p);
    case Element::F64: return static_cast<float>(loadAs<double>(p));
  }
  return 0.f;
}

// What a copy of a value takes in memory beyond what it shares.
int64_t footprint(const Torch7Object& value) {
  return static_cast<int64_t>(sizeof(Torch7Object) + value.string.size() + value.className.size());
}

std::string errnoText() { return std::strerror(errno); }

// The whole file: a model's file is read once, front to back, and every value is checked
// against the bytes that are left.
std::string readFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  NN_CHECK(fd >= 0, path << ": cannot open: " << errnoText());
  std::string bytes;
  std::string problem;
  struct stat info;
  if (fstat(fd, &info) != 0)
    problem = errnoText();
  else if (!S_ISREG(info.st_mode))
    problem = "not a regular file";
  else {
    bytes.resize(static_cast<size_t>(info.st_size));
    for (size_t done = 0; done < bytes.size() && problem.empty();) {
      const ssize_t n = read(fd, &bytes[done], bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) problem = errnoText();
      if (n == 0) problem = "the file shrank while it was read";
      if (n > 0) done += static_cast<size_t>(n);
    }
  }
  close(fd);
  NN_CHECK(problem.empty(), path << ": cannot read: " << problem);
  return bytes;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Values.

const Torch7Table& Torch7Object::table() const {
  NN_CHECK(kind == Kind::Table || kind == Kind::Object, "Torch7Object: expected a table or an object, got a " << describe());
  if (table_) return *table_;
  const std::shared_ptr<const Torch7Table> outer = cycle_.lock();
  NN_CHECK(outer, "Torch7Object: the " << describe()
                                       << " refers back to a table that contains it, and that table is gone (keep the "
                                          "value readTorch7 returned)");
  // The outer table lives as long as the value readTorch7 returned, which holds it.
  return *outer;
}

const Torch7Object* Torch7Object::field(const std::string& key) const { return table().find(key); }

const void* Torch7Object::identity() const {
  if (kind != Kind::Table && kind != Kind::Object) return nullptr;
  return table_ ? static_cast<const void*>(table_.get()) : static_cast<const void*>(cycle_.lock().get());
}

std::string Torch7Object::describe() const {
  switch (kind) {
    case Kind::Nil: return "nil";
    case Kind::Number: return "number";
    case Kind::String: return "string";
    case Kind::Boolean: return "boolean";
    case Kind::Table: return "table";
    case Kind::Tensor: return className;
    case Kind::Object: return className;
  }
  return "value";
}

// A key assigned twice: Lua keeps the last value, and so do these (they search from the end).
const Torch7Object* Torch7Table::find(const std::string& key) const {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (it->first.kind == Torch7Object::Kind::String && it->first.string == key) return &it->second;
  return nullptr;
}

const Torch7Object* Torch7Table::find(double key) const {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (it->first.kind == Torch7Object::Kind::Number && it->first.number == key) return &it->second;
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Reading.

/// Reads the values of one file, front to back (File.lua's readObject, as data only).
class Torch7Reader {
 public:
  Torch7Reader(const std::string& path, std::string bytes)
      : path_(path),
        bytes_(std::move(bytes)),
        budget_(checkedSum({checkedProduct({static_cast<int64_t>(bytes_.size()), kBudgetFactor}, [] { return "budget"; }),
                            kBudgetExtra},
                           [] { return "budget"; })) {}

  Torch7Object read() { return readValue(0); }

 private:
  using Kind = Torch7Object::Kind;

  [[noreturn]] void fail(size_t at, const std::string& message) const {
    throw Error(path_ + ": byte " + std::to_string(at) + ": " + message);
  }

  int64_t left() const { return static_cast<int64_t>(bytes_.size() - pos_); }

  // `count` bytes at the position, or an nn::Error saying what was expected there.
  const char* take(int64_t count, const char* what) {
    if (count > left())
      fail(pos_, std::string("the file ends (") + std::to_string(left()) + " bytes left) where " + what + " (" +
                     std::to_string(count) + " bytes) was expected");
    const char* p = bytes_.data() + pos_;
    pos_ += static_cast<size_t>(count);
    return p;
  }

  int32_t readInt(const char* what) { return loadAs<int32_t>(take(4, what)); }
  int64_t readLong(const char* what) { return loadAs<int64_t>(take(8, what)); }

  // Charges what the reader builds to the budget: the file's bytes times kBudgetFactor.
  void charge(int64_t bytes, size_t at) {
    if (bytes > budget_)
      fail(at, "the values read so far would take more than " + std::to_string(kBudgetFactor) +
                   " times the file's bytes in memory");
    budget_ -= bytes;
  }

  std::string readString(const char* what) {
    const size_t at = pos_;
    const int32_t length = readInt(what);
    if (length < 0) fail(at, std::string(what) + " has a negative length, " + std::to_string(length));
    const char* p = take(length, what);
    charge(length, at);
    return std::string(p, static_cast<size_t>(length));
  }

  Torch7Object readValue(int depth) {
    const size_t at = pos_;
    if (depth > kMaxDepth) fail(at, "values nested more than " + std::to_string(kMaxDepth) + " levels deep");
    const int32_t type = readInt("a value's type");
    Torch7Object value;
    switch (type) {
      case kNil:
        return value;
      case kNumber:
        value.kind = Kind::Number;
        value.number = loadAs<double>(take(8, "a number"));
        return value;
      case kString:
        value.kind = Kind::String;
        value.string = readString("a string");
        return value;
      case kBoolean: {
        const int32_t b = readInt("a boolean");
        if (b != 0 && b != 1) fail(at + 4, "a boolean is " + std::to_string(b) + ", expected 0 or 1");
        value.kind = Kind::Boolean;
        value.boolean = b == 1;
        return value;
      }
      case kFunction:
      case kLegacyRecursiveFunction:
      case kRecursiveFunction:
        fail(at, "a Lua function (type " + std::to_string(type) +
                     "): functions are code, and this reader reads data only (save the model without them)");
      case kTable:
      case kTorch:
        return readShared(type, at, depth);
      default:
        fail(at, "unknown value type " + std::to_string(type) + " (expected 0 to 8)");
    }
  }

  // A table or a Torch object: a reference to one read before, or a new one.
  Torch7Object readShared(int32_t type, size_t at, int depth) {
    const int32_t index = readInt(type == kTable ? "a table's index" : "an object's index");
    if (auto it = done_.find(index); it != done_.end()) {
      // The copy's own memory: the class name (the rest is shared, or charged with the entry).
      charge(static_cast<int64_t>(it->second.className.size()), at);
      return it->second;
    }
    if (auto it = open_.find(index); it != open_.end()) {
      // A value that contains itself: Lua allows it for tables and objects (their fields), and
      // the inner place holds a weak reference. A tensor or storage cannot contain anything.
      if (!it->second.table_)
        fail(at, "value #" + std::to_string(index) + " (" + it->second.describe() + ") refers to itself");
      Torch7Object inner = it->second;
      inner.cycle_ = inner.table_;
      inner.table_.reset();
      return inner;
    }
    Torch7Object value = type == kTable ? readTable(index, depth) : readTorchObject(index, at, depth);
    open_.erase(index);
    done_.emplace(index, value);
    return value;
  }

  // `count` key-value pairs into `table`, each pair at least 8 bytes of the file.
  void readEntries(Torch7Table& table, int64_t count, size_t at, int depth, bool list) {
    const int64_t least = list ? 4 : 8;
    if (count < 0 || count > left() / least)
      fail(at, "a table of " + std::to_string(count) + " entries, of at least " + std::to_string(least) +
                   " bytes each, where " + std::to_string(left()) + " bytes are left");
    charge(count * static_cast<int64_t>(sizeof(table.entries[0])), at);
    table.entries.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const size_t keyAt = pos_;
      Torch7Object key;
      if (list) {
        key.kind = Kind::Number;
        key.number = static_cast<double>(i + 1);
      } else {
        key = readValue(depth + 1);
        if (key.kind == Kind::Nil) fail(keyAt, "a table key is nil");
        if (key.kind == Kind::Number && std::isnan(key.number)) fail(keyAt, "a table key is NaN");
      }
      Torch7Object value = readValue(depth + 1);
      table.entries.emplace_back(std::move(key), std::move(value));
    }
  }

  Torch7Object readTable(int32_t index, int depth) {
    auto table = std::make_shared<Torch7Table>();
    Torch7Object value;
    value.kind = Kind::Table;
    value.table_ = table;
    open_.emplace(index, value);
    const size_t countAt = pos_;
    readEntries(*table, readInt("a table's entry count"), countAt, depth, false);
    return value;
  }

  Torch7Object readTorchObject(int32_t index, size_t at, int depth) {
    Torch7Object value;
    const std::string first = readString("a class version or name");
    // "V 1", then the class name; files written before versions have the name alone.
    if (startsWith(first, "V ")) {
      char* end = nullptr;
      const long version = std::strtol(first.c_str() + 2, &end, 10);
      if (end == first.c_str() + 2 || *end != '\0' || version < 0 || version > 1000000)
        fail(at + 8, "a class version \"" + first + "\" (expected \"V \" and a number)");
      value.version = static_cast<int>(version);
      value.className = readString("a class name");
    } else {
      value.className = first;
    }
    if (value.className.empty() || value.className.size() > kMaxClassName)
      fail(at + 8, "a class name of " + std::to_string(value.className.size()) + " bytes (expected 1 to " +
                       std::to_string(kMaxClassName) + ")");
    if (const std::optional<TensorClass> c = tensorClass(value.className)) {
      value.kind = Kind::Tensor;
      // Registered while it is read, as Lua does: its storage may not refer to it.
      open_.emplace(index, value);
      if (c->storage)
        readStorage(value, *c->type);
      else
        readTensor(value, *c, depth);
      return value;
    }
    value.kind = Kind::Object;
    auto fields = std::make_shared<Torch7Table>();
    value.table_ = fields;
    open_.emplace(index, value);
    const size_t fieldsAt = pos_;
    if (value.className == "tds.Vec" || value.className == "tds.Hash") {
      // tds's own format: a count, an unused value, then the items (or key-value pairs).
      const int32_t count = readInt("a tds container's size");
      readValue(depth + 1);
      readEntries(*fields, count, fieldsAt, depth, value.className == "tds.Vec");
      return value;
    }
    // DataParallelTable (version 2 on) writes its device list before its fields.
    if (value.className == "nn.DataParallelTable" && value.version >= 2) readValue(depth + 1);
    const size_t tableAt = pos_;
    const Torch7Object var = readValue(depth + 1);
    if (var.kind != Kind::Table)
      fail(tableAt, "the fields of " + value.className + " are a " + var.describe() + ", expected a table");
    const Torch7Table& entries = var.table();
    for (const auto& [key, item] : entries.entries) charge(footprint(key) + footprint(item), tableAt);
    // Torch copies the fields into the object; the table read is a value of its own (another
    // index may refer to it).
    fields->entries = entries.entries;
    return value;
  }

  void readStorage(Torch7Object& value, const ElementType& type) {
    const size_t at = pos_;
    const int64_t count = readLong("a storage's element count");
    if (count < 0 || count > left() / type.bytes)
      fail(at, value.className + " of " + std::to_string(count) + " elements of " + std::to_string(type.bytes) +
                   " bytes, where " + std::to_string(left()) + " bytes are left");
    charge(4 * count + static_cast<int64_t>(sizeof(Storage)), at);
    value.tensor = Tensor::empty({count});
    const char* p = take(count * type.bytes, "a storage's elements");
    float* out = value.tensor.data();
    for (int64_t i = 0; i < count; ++i) out[i] = elementAt(p + i * type.bytes, type.element);
  }

  void readTensor(Torch7Object& value, const TensorClass& c, int depth) {
    const size_t at = pos_;
    const int32_t dims = readInt("a tensor's dimension count");
    if (dims < 0 || dims > kMaxDims)
      fail(at, value.className + " of " + std::to_string(dims) + " dimensions (expected 0 to " +
                   std::to_string(kMaxDims) + ")");
    charge(static_cast<int64_t>(sizeof(TensorImpl)) + 16 * dims, at);
    std::vector<int64_t> sizes(static_cast<size_t>(dims)), strides(static_cast<size_t>(dims));
    const size_t sizesAt = pos_;
    for (int64_t& s : sizes) s = readLong("a tensor's size");
    const size_t stridesAt = pos_;
    for (int64_t& s : strides) s = readLong("a tensor's stride");
    const size_t offsetAt = pos_;
    const int64_t fileOffset = readLong("a tensor's storage offset");  // counted from 1 in the file
    int64_t count = 0;
    if (!extentOf(sizes.data(), sizes.size(), count))
      fail(sizesAt, value.className + " of sizes " + shapeString(sizes) + " (expected sizes of at least 0, at most " +
                        std::to_string(kMaxElements) + " elements)");
    for (int64_t s : strides)
      if (!isExtent(s))
        fail(stridesAt, value.className + " of strides " + shapeString(strides) +
                            " (expected strides of at least 0: a tensor of negative strides is not read)");
    bool empty = dims == 0;
    for (int64_t s : sizes) empty = empty || s == 0;
    const size_t storageAt = pos_;
    const Torch7Object storage = readValue(depth + 1);
    if (storage.kind == Kind::Nil) {
      if (!empty) fail(storageAt, value.className + " of sizes " + shapeString(sizes) + " has no storage");
    } else if (storage.kind != Kind::Tensor || storage.className != c.storageName) {
      fail(storageAt, "the storage of " + value.className + " is a " + storage.describe() + ", expected " +
                          c.storageName);
    }
    if (empty) {
      // Torch7's tensors of no dimension are empty; an empty view needs no storage.
      value.tensor = dims == 0 ? Tensor() : Tensor::empty(sizes);
      return;
    }
    // The last element the view reaches, offset + sum (size - 1) stride, inside the storage.
    const int64_t offset = fileOffset >= 1 ? fileOffset - 1 : -1;
    int64_t last = offset;
    bool fits = offset >= 0;
    for (int i = 0; i < dims && fits; ++i) {
      int64_t step = 0;
      fits = mulInto(sizes[i] - 1, strides[i], step) && addInto(last, step, last);
    }
    const int64_t available = storage.tensor.numel();
    if (!fits || last >= available)
      fail(offsetAt, value.className + " of sizes " + shapeString(sizes) + ", strides " + shapeString(strides) +
                         " and offset " + std::to_string(fileOffset) + " reaches outside its storage of " +
                         std::to_string(available) + " elements");
    value.tensor.set_(storage.tensor.storage(), offset, sizes, strides);
  }

  std::string path_;
  std::string bytes_;
  size_t pos_ = 0;
  int64_t budget_;
  // Values by their index: those read whole, and the tables and objects still being read.
  std::unordered_map<int32_t, Torch7Object> done_;
  std::unordered_map<int32_t, Torch7Object> open_;
};

Torch7Object readTorch7(const std::string& path) {
  Torch7Reader reader(path, readFile(path));
  try {
    return reader.read();
  } catch (const std::bad_alloc&) {
    throw Error(path + ": out of memory while reading");
  }
}

// ---------------------------------------------------------------------------------------
// Modules.

namespace {

using Kind = Torch7Object::Kind;

// Builds the modules of one file's tree, each once (a module in two places of the file is one
// module in two places here).
class ModuleBuilder {
 public:
  ModuleBuilder(const std::string& path, int64_t storageBytes) : path_(path), storageLeft_(storageBytes) {}

  ModulePtr build(const Torch7Object& value, const std::string& place, int depth);

  // Each module's training mode as its `train` field says, the containers' first, so that a
  // module's own field decides for it.
  void applyModes() {
    for (const auto& [module, train] : modes_) {
      if (train)
        module->training();
      else
        module->evaluate();
    }
  }

 private:
  // What a module's builder reads: the object, its place, and its class name.
  struct Site {
    const Torch7Object& object;
    std::string at;  // "model.t7: modules[3]: nn.Linear: "
  };

  [[noreturn]] static void fail(const Site& s, const std::string& message) { throw Error(s.at + message); }

  // A field, or null where it is absent or nil.
  static const Torch7Object* optional(const Site& s, const char* key) {
    const Torch7Object* f = s.object.field(key);
    return f && f->kind != Kind::Nil ? f : nullptr;
  }

  static double number(const Site& s, const char* key, std::optional<double> fallback = std::nullopt) {
    const Torch7Object* f = optional(s, key);
    if (!f) {
      if (!fallback) fail(s, std::string("has no field ") + key);
      return *fallback;
    }
    if (f->kind != Kind::Number || !std::isfinite(f->number))
      fail(s, std::string("field ") + key + " is a " + f->describe() + ", expected a finite number");
    return f->number;
  }

  static int64_t integer(const Site& s, const char* key, std::optional<int64_t> fallback = std::nullopt) {
    const double v = number(s, key, fallback ? std::optional<double>(static_cast<double>(*fallback)) : std::nullopt);
    // 2^53: every integer up to it is a double exactly.
    if (v != std::floor(v) || std::fabs(v) > 9007199254740992.0)
      fail(s, std::string("field ") + key + " is " + std::to_string(v) + ", expected an integer");
    return static_cast<int64_t>(v);
  }

  static bool flag(const Site& s, const char* key, bool fallback) {
    const Torch7Object* f = optional(s, key);
    if (!f) return fallback;
    if (f->kind != Kind::Boolean) fail(s, std::string("field ") + key + " is a " + f->describe() + ", expected a boolean");
    return f->boolean;
  }

  static const Tensor* tensor(const Site& s, const char* key, bool required) {
    const Torch7Object* f = optional(s, key);
    if (!f) {
      if (required) fail(s, std::string("has no field ") + key);
      return nullptr;
    }
    if (f->kind != Kind::Tensor) fail(s, std::string("field ") + key + " is a " + f->describe() + ", expected a tensor");
    return &f->tensor;
  }

  static void expectSizes(const Site& s, const char* key, const Tensor& t, const std::vector<int64_t>& sizes) {
    if (t.sizes() != sizes)
      fail(s, std::string(key) + " is " + t.shapeString() + ", expected " + shapeString(sizes));
  }

  // The integers of a torch.LongStorage field (View's and Reshape's sizes).
  static std::vector<int64_t> sizesField(const Site& s, const char* key) {
    const Torch7Object* f = optional(s, key);
    if (!f || f->kind != Kind::Tensor || !endsWith(f->className, "Storage"))
      fail(s, std::string("field ") + key + " is a " + (f ? f->describe() : std::string("nil")) +
                  ", expected a torch.LongStorage");
    std::vector<int64_t> sizes;
    for (float v : f->tensor.toVector()) {
      if (v != std::floor(v) || !isSignedExtent(static_cast<int64_t>(v)))
        fail(s, std::string("field ") + key + " holds " + std::to_string(v) + ", expected integers");
      sizes.push_back(static_cast<int64_t>(v));
    }
    return sizes;
  }

  // The children of a container's `modules` field, a list 1..n (a key assigned twice keeps its
  // last value, as in Lua).
  std::vector<ModulePtr> children(const Site& s, const std::string& place, int depth) {
    const Torch7Object* f = optional(s, "modules");
    if (!f || f->kind != Kind::Table)
      fail(s, "field modules is a " + (f ? f->describe() : std::string("nil")) + ", expected a table");
    const Torch7Table& list = f->table();
    const size_t n = list.entries.size();
    std::vector<const Torch7Object*> items(n, nullptr);
    for (const auto& [key, item] : list.entries) {
      if (key.kind != Kind::Number || key.number != std::floor(key.number) || key.number < 1 ||
          key.number > static_cast<double>(n))
        fail(s, "field modules has a key " + (key.kind == Kind::Number ? std::to_string(key.number) : key.describe()) +
                    ", expected the list's indices 1 to " + std::to_string(n));
      items[static_cast<size_t>(key.number) - 1] = &item;
    }
    std::vector<ModulePtr> modules;
    for (size_t i = 0; i < n; ++i) {
      if (!items[i]) fail(s, "field modules has " + std::to_string(n) + " entries but no item " + std::to_string(i + 1));
      modules.push_back(build(*items[i], (place.empty() ? "" : place + ".") + "modules[" + std::to_string(i + 1) + "]", depth + 1));
    }
    return modules;
  }

  // A container of `kids`: its modules counted at every place (a module in two places twice) at
  // most kMaxPlaces, and all containers' together at most kMaxPlacesWalked, since making a
  // container walks each child's tree (a container may not hold itself), and modules shared
  // at every level would make that walk exponential in a small file.
  ModulePtr container(const Site& s, const std::string& type, std::vector<ModulePtr> kids) {
    int64_t count = 1;
    for (const ModulePtr& kid : kids) count += places_.at(kid.get());
    if (count > kMaxPlaces || count > kMaxPlacesWalked - placesWalked_)
      fail(s, "the module tree holds more than " + std::to_string(kMaxPlaces) +
                  " modules counted at each of their places, or its containers more than " +
                  std::to_string(kMaxPlacesWalked) + " together");
    placesWalked_ += count;
    ModulePtr module = create(s, type, Config(), std::move(kids));
    places_[module.get()] = count;
    return module;
  }

  // createModule under the storage still allowed, its errors named by the site.
  ModulePtr create(const Site& s, const std::string& type, const Config& config, std::vector<ModulePtr> kids = {}) {
    try {
      std::optional<StorageLimit> limit;
      if (kids.empty()) limit.emplace(storageLeft_, "the modules, which need at most " + std::to_string(kModuleStorageFactor) + " times the file's bytes");
      ModulePtr module = createModule(type, config, std::move(kids));
      if (limit) storageLeft_ = limit->bytesLeft();
      return module;
    } catch (const std::bad_alloc&) {
      fail(s, "cannot build " + type + ": out of memory");
    } catch (const Error& e) {
      fail(s, "cannot build " + type + ": " + e.what());
    }
  }

  // Copies `source` into the module's tensor `name` (of the same number of elements, in
  // row-major order); a missing source leaves zeros.
  static void fill(const Site& s, Module& module, const std::string& name, const Tensor* source) {
    for (NamedTensor& t : module.stateDict()) {
      if (t.name != name) continue;
      if (!source) {
        t.value.zero_();
        return;
      }
      if (source->numel() != t.value.numel())
        fail(s, name + " is " + source->shapeString() + ", expected " + t.value.shapeString());
      t.value.copy_(*source);
      return;
    }
    fail(s, "the module has no tensor " + name);
  }

  ModulePtr linear(const Site& s) {
    const Tensor& weight = *tensor(s, "weight", true);
    if (weight.dim() != 2) fail(s, "weight is " + weight.shapeString() + ", expected [outputSize, inputSize]");
    const Tensor* bias = tensor(s, "bias", false);
    if (bias) expectSizes(s, "bias", *bias, {weight.size(0)});
    ModulePtr m = create(s, "nn.Linear",
                         Config().set("inputSize", weight.size(1)).set("outputSize", weight.size(0)).set("bias", bias != nullptr));
    fill(s, *m, "weight", &weight);
    if (bias) fill(s, *m, "bias", bias);
    return m;
  }

  ModulePtr convolution(const Site& s, bool dilated) {
    const int64_t nIn = integer(s, "nInputPlane"), nOut = integer(s, "nOutputPlane");
    const int64_t kW = integer(s, "kW"), kH = integer(s, "kH");
    // Files of before padW and padH have one `padding`.
    const int64_t padding = integer(s, "padding", 0);
    const int64_t padW = integer(s, "padW", padding);
    // cudnn's grouped convolutions: each filter sees nInputPlane / groups planes.
    const int64_t groups = integer(s, "groups", 1);
    if (groups < 1 || nIn % groups != 0 || nOut % groups != 0)
      fail(s, "groups " + std::to_string(groups) + " does not divide nInputPlane " + std::to_string(nIn) +
                  " and nOutputPlane " + std::to_string(nOut));
    const int64_t planes = nIn / groups;
    Config config;
    config.set("nInputPlane", nIn).set("nOutputPlane", nOut).set("kW", kW).set("kH", kH);
    config.set("dW", integer(s, "dW", 1)).set("dH", integer(s, "dH", 1));
    config.set("padW", padW).set("padH", integer(s, "padH", padW));
    if (dilated) config.set("dilW", integer(s, "dilationW", 1)).set("dilH", integer(s, "dilationH", 1));
    config.set("groups", groups);
    // The weight, [nOutputPlane, nInputPlane / groups, kH, kW], or SpatialConvolutionMM's
    // [nOutputPlane, nInputPlane * kH * kW]: the same elements in the same order.
    const Tensor& weight = *tensor(s, "weight", true);
    int64_t patch = 0;
    if (!isExtent(planes) || !isExtent(kH) || !isExtent(kW) || !mulInto(planes, kH, patch) ||
        !mulInto(patch, kW, patch))
      fail(s, "nInputPlane / groups " + std::to_string(planes) + " x kH " + std::to_string(kH) + " x kW " +
                  std::to_string(kW) + " is not a size");
    if (weight.sizes() != std::vector<int64_t>{nOut, planes, kH, kW} &&
        weight.sizes() != std::vector<int64_t>{nOut, patch})
      fail(s, "weight is " + weight.shapeString() + ", expected " + shapeString({nOut, planes, kH, kW}) + " or " +
                  shapeString({nOut, patch}));
    const Tensor* bias = tensor(s, "bias", false);
    if (bias) expectSizes(s, "bias", *bias, {nOut});
    // A convolution without bias (noBias()) has none here either.
    config.set("bias", bias != nullptr);
    ModulePtr m = create(s, dilated ? "nn.SpatialDilatedConvolution" : "nn.SpatialConvolution", config);
    fill(s, *m, "weight", &weight);
    if (bias) fill(s, *m, "bias", bias);
    return m;
  }

  ModulePtr batchNormalization(const Site& s, bool spatial) {
    const Tensor& mean = *tensor(s, "running_mean", true);
    if (mean.dim() != 1) fail(s, "running_mean is " + mean.shapeString() + ", expected one dimension");
    const int64_t n = mean.size(0);
    const double eps = number(s, "eps", 1e-5);
    const Tensor* var = tensor(s, "running_var", false);
    // Files of version 1 keep 1 / sqrt(var + eps) instead (BatchNormalization:read).
    const Tensor* std = var ? nullptr : tensor(s, "running_std", true);
    expectSizes(s, var ? "running_var" : "running_std", var ? *var : *std, {n});
    const Tensor* weight = tensor(s, "weight", false);
    const Tensor* bias = tensor(s, "bias", false);
    if ((weight == nullptr) != (bias == nullptr)) fail(s, "has a weight or a bias, not both");
    if (weight) expectSizes(s, "weight", *weight, {n});
    if (bias) expectSizes(s, "bias", *bias, {n});
    ModulePtr m = create(s, spatial ? "nn.SpatialBatchNormalization" : "nn.BatchNormalization",
                         Config()
                             .set("nOutput", n)
                             .set("eps", static_cast<float>(eps))
                             .set("momentum", static_cast<float>(number(s, "momentum", 0.1)))
                             .set("affine", weight != nullptr));
    fill(s, *m, "running_mean", &mean);
    if (var) {
      fill(s, *m, "running_var", var);
    } else {
      std::vector<float> values = std->toVector();
      for (float& v : values) v = static_cast<float>(1.0 / (static_cast<double>(v) * v) - eps);
      const Tensor converted = Tensor::fromVector({n}, values);
      fill(s, *m, "running_var", &converted);
    }
    if (weight) {
      fill(s, *m, "weight", weight);
      fill(s, *m, "bias", bias);
    }
    return m;
  }

  ModulePtr pooling(const Site& s, bool max) {
    const int64_t kW = integer(s, "kW"), kH = integer(s, "kH");
    Config config;
    config.set("kW", kW).set("kH", kH);
    // SpatialMaxPooling's strides default to the kernel, SpatialAveragePooling's to 1.
    config.set("dW", integer(s, "dW", max ? kW : 1)).set("dH", integer(s, "dH", max ? kH : 1));
    config.set("padW", integer(s, "padW", 0)).set("padH", integer(s, "padH", 0));
    config.set("ceilMode", flag(s, "ceil_mode", false));
    if (!max) {
      if (!flag(s, "divide", true)) fail(s, "sums without dividing (divide = false, files of old versions) are not supported");
      config.set("countIncludePad", flag(s, "count_include_pad", true));
    }
    return create(s, max ? "nn.SpatialMaxPooling" : "nn.SpatialAveragePooling", config);
  }

  // Torch7's View infers a batch dimension where the sizes hold fewer elements than the input;
  // View(-1, sizes...) does the same here (but keeps a batch of one as a dimension of 1).
  ModulePtr view(const Site& s) {
    std::vector<int64_t> sizes = sizesField(s, "size");
    bool inferred = false;
    for (int64_t v : sizes) inferred = inferred || v == -1;
    if (inferred && optional(s, "numInputDims"))
      fail(s, "a size of -1 with setNumInputDims is not supported");
    if (!inferred) sizes.insert(sizes.begin(), -1);
    return create(s, "nn.View", Config().set("sizes", sizes));
  }

  ModulePtr reshape(const Site& s) {
    const std::vector<int64_t> sizes = sizesField(s, "size");
    const Torch7Object* batchMode = optional(s, "batchMode");
    // batchMode false: the sizes whatever the input, a View.
    if (batchMode && batchMode->kind == Kind::Boolean && !batchMode->boolean)
      return create(s, "nn.View", Config().set("sizes", sizes));
    return create(s, "nn.Reshape", Config().set("sizes", sizes).set("batchMode", flag(s, "batchMode", false)));
  }

  ModulePtr dropout(const Site& s) {
    // Version 1 scaled the output at evaluation instead of training (no v2 field in old files).
    if (!flag(s, "v2", false)) fail(s, "Dropout of version 1 (scaled at evaluation, not in training) is not supported");
    return create(s, "nn.Dropout", Config().set("p", static_cast<float>(number(s, "p", 0.5))));
  }

  ModulePtr make(const Site& s, const std::string& type, const std::string& place, int depth);

  std::string path_;
  int64_t storageLeft_;
  std::unordered_map<const void*, ModulePtr> built_;
  std::unordered_map<const Module*, int64_t> places_;
  int64_t placesWalked_ = 0;
  std::set<const void*> open_;
  std::vector<std::pair<ModulePtr, bool>> modes_;
};

ModulePtr ModuleBuilder::make(const Site& s, const std::string& type, const std::string& place, int depth) {
  // cudnn's modules hold the fields of nn's.
  const std::string name = startsWith(type, "cudnn.") ? "nn." + type.substr(6) : type;
  if (name == "nn.Sequential" || name == "nn.ConcatTable") return container(s, name, children(s, place, depth));
  if (name == "nn.DataParallelTable") {
    std::vector<ModulePtr> replicas = children(s, place, depth);
    if (replicas.empty()) fail(s, "has no replica");
    return replicas[0];
  }
  if (name == "nn.Linear") return linear(s);
  if (name == "nn.SpatialConvolution" || name == "nn.SpatialConvolutionMM") return convolution(s, false);
  if (name == "nn.SpatialDilatedConvolution") return convolution(s, true);
  if (name == "nn.BatchNormalization") return batchNormalization(s, false);
  if (name == "nn.SpatialBatchNormalization") return batchNormalization(s, true);
  if (name == "nn.SpatialMaxPooling") return pooling(s, true);
  if (name == "nn.SpatialAveragePooling") return pooling(s, false);
  if (name == "nn.ReLU") return create(s, name, Config().set("inplace", flag(s, "inplace", false)));
  if (name == "nn.Threshold")
    return create(s, name,
                  Config()
                      .set("threshold", static_cast<float>(number(s, "threshold", 1e-6)))
                      .set("value", static_cast<float>(number(s, "val", 0)))
                      .set("inplace", flag(s, "inplace", false)));
  if (name == "nn.CAddTable") return create(s, name, Config().set("inplace", flag(s, "inplace", false)));
  if (name == "nn.View") return view(s);
  if (name == "nn.Reshape") return reshape(s);
  if (name == "nn.Dropout") return dropout(s);
  if (name == "nn.Tanh" || name == "nn.Sigmoid" || name == "nn.Identity" || name == "nn.LogSoftMax" ||
      name == "nn.SoftMax")
    return create(s, name, Config());
  fail(s, "class " + type + " is not supported");
}

ModulePtr ModuleBuilder::build(const Torch7Object& value, const std::string& place, int depth) {
  const std::string at = path_ + ": " + (place.empty() ? "" : place + ": ");
  if (value.kind != Kind::Object)
    throw Error(at + "a " + value.describe() + ", expected a module (a Torch object such as nn.Sequential)");
  const void* id = value.identity();
  if (auto it = built_.find(id); it != built_.end()) return it->second;
  NN_CHECK(open_.insert(id).second, at << value.className << " contains itself");
  NN_CHECK(depth <= kMaxDepth, at << "modules nested more than " << kMaxDepth << " levels deep");
  const Site site{value, at};
  // Pre-order, so that the mode of a container, which sets its children's too, comes first.
  const size_t modeAt = modes_.size();
  modes_.emplace_back(nullptr, true);
  ModulePtr module = make(site, value.className, place, depth);
  places_.emplace(module.get(), 1);
  modes_[modeAt] = {module, flag(site, "train", true)};
  open_.erase(id);
  built_.emplace(id, module);
  return module;
}

}  // namespace

ModulePtr loadTorch7(const std::string& path) {
  const Torch7Object root = readTorch7(path);
  int64_t fileBytes = 0;
  struct stat info;
  if (stat(path.c_str(), &info) == 0) fileBytes = info.st_size;
  const int64_t storage = checkedSum({checkedProduct({fileBytes, kModuleStorageFactor}, [] { return "limit"; }), kBudgetExtra},
                                     [] { return "limit"; });
  ModuleBuilder builder(path, storage);
  ModulePtr model = builder.build(root, "", 0);
  builder.applyModes();
  return model;
}

}  // namespace nn

// nn::save and nn::load, and a state dict loaded into a module (nn::loadStateDict,
// nn::loadStateInto): names matched, shapes checked, all or nothing. The file format is
// Safetensors.cpp's, the module tree ModuleTree.cpp's.
#include "nn/io/Serialize.h"

#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

constexpr const char* kModuleKey = "nn.module";
constexpr const char* kFormatKey = "format";

}  // namespace

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

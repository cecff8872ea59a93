// nn::describeModuleTree and nn::buildModuleTree: the module tree in JSON, as nn::save stores it
// in a file's metadata and nn::load rebuilds it, every node checked.
#include "nn/io/Serialize.h"

#include <cmath>
#include <map>
#include <optional>

#include "nn/core/Container.h"
#include "nn/io/JsonChecks.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

using io::brief;
using io::checkJsonCost;
using io::Json;

constexpr int kMaxTreeDepth = 100;
// Places of modules in a tree, a module in several places counted at each: far more than any
// network has, and few enough to walk. Modules shared at every level ("same_as") would otherwise
// double the places with each level of a few bytes.
constexpr int64_t kMaxTreePlaces = int64_t{1} << 20;
// A module tree nests two levels per module (the module and its children) and its config.
constexpr int kMaxTreeJsonDepth = 2 * kMaxTreeDepth + 4;

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

}  // namespace nn

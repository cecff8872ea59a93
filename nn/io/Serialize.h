// nn::save and nn::load: modules and their state in safetensors files, the format the
// PyTorch ecosystem reads, with the module tree in the file's metadata.
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of JSON (padded
// with spaces so that the data starts at a multiple of 8), then raw little-endian float32
// data. The header maps each tensor's name to {"dtype":"F32","shape":[...],
// "data_offsets":[begin,end]} (byte offsets into the data section) and "__metadata__" to a
// map of strings. nn::save stores module.stateDict() under PyTorch's names ("0.weight"),
// "format": "pt", and "nn.module": the module tree as a JSON string, {"type": "nn.Linear",
// "config": {...}, "training": true, "children": [...]}, where a module used in two places is
// described at the first and {"same_as": "0"} (its first place, as in stateDict names) stands
// at the others, so that it loads as one module again. Callers that store more (optimizer
// state, the epoch) build on writeSafetensors/readSafetensors and the three helpers below.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// String metadata of a safetensors file (the format allows only strings).
using Metadata = std::map<std::string, std::string>;

/// Everything one safetensors file holds.
struct SafetensorsContents {
  /// CPU tensors on cpu:0, in the order of their data in the file.
  std::vector<NamedTensor> tensors;
  /// The "__metadata__" entries.
  Metadata metadata;
};

/// Writes tensors (on any device: they are copied to the host) and metadata as a safetensors
/// file, tensors in the given order. Atomic: a temporary file in the same folder is written,
/// fsync'd and renamed over `path`, so that on any error `path` keeps its old contents.
void writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors, const Metadata& metadata);
/// Reads a safetensors file, checking every length, offset, dtype and shape before using it;
/// a truncated or corrupted file is an nn::Error naming the path (and the tensor at fault).
SafetensorsContents readSafetensors(const std::string& path);
/// The metadata alone, read from the header (checked as readSafetensors checks it).
Metadata readSafetensorsMetadata(const std::string& path);

/// The module tree (types, configs, training modes) as the JSON string stored as "nn.module".
std::string describeModuleTree(const Module& module);
/// Rebuilds a module tree from describeModuleTree's string, on cpu:0, with freshly
/// initialised parameters; `source` (the file) starts every error message. `stateBytes` is
/// the size of the tensors that will fill the tree (a file's): a tree whose modules would
/// need more than three times as much cannot match them and is an nn::Error before it does.
ModulePtr buildModuleTree(const std::string& description, const std::string& source, int64_t stateBytes);
/// Tensors named "training.*" hold a checkpoint's training state (nn/io/Checkpoint.h), not a
/// module's: loading a module skips them.
constexpr const char* kTrainingStatePrefix = "training.";
/// Whether a tensor name starts with kTrainingStatePrefix.
bool isTrainingState(const std::string& tensorName);

/// module.stateDict() with each tensor once, under the name of its first place: the tensors of
/// a module in two places (README, "A module in two places") are not written again at the
/// others. What nn::save and checkpoints write.
std::vector<NamedTensor> stateDictOnce(Module& module);

/// Copies `tensors` (less training state) into module.stateDict() by name, all or nothing:
/// unless every tensor of the module is there with the module's shape and none is left
/// over, nothing is copied and an nn::Error starting with `source` names the tensor. A
/// tensor of a module in two places is read under its first place's name; a file may also hold
/// it under the others' (files of earlier versions do), and then every copy must be equal, bit
/// for bit, or an nn::Error names the two that differ.
void loadStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source);
/// What loadStateDict checks, without copying anything: the same nn::Error where it would refuse.
void checkStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source);

/// Saves stateDictOnce(module) and the module tree to `path`, atomically (see writeSafetensors).
/// `extra` adds metadata entries of the caller's own; "format" and "nn.module" are reserved.
void save(Module& module, const std::string& path, const Metadata& extra = {});
/// Rebuilds a saved module on cpu:0, with its parameters, buffers and training modes.
ModulePtr load(const std::string& path);
/// Loads the tensors of a file into an existing module (all or nothing, as loadStateDict).
/// The file needs no module tree: safetensors files written by PyTorch load too.
void loadStateInto(Module& module, const std::string& path);

}  // namespace nn

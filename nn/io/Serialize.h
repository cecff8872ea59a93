// nn::save and nn::load: modules and their state in safetensors files, the format the
// PyTorch ecosystem reads, with the module tree in the file's metadata.
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of JSON (padded
// with spaces so that the data starts at a multiple of 8), then raw little-endian data. The
// header maps each tensor's name to {"dtype":"F32","shape":[...], "data_offsets":[begin,end]}
// (byte offsets into the data section) and "__metadata__" to a map of strings. Tensors are
// written in their element type (F32, BF16, F16: nn/tensor/DType.h); every dtype PyTorch writes
// (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL) is read, as float32, or F16 and BF16 as
// tensors of their own type where asked (readSafetensors' keepElementTypes). nn::save stores
// module.stateDict() under PyTorch's names ("0.weight"), "format": "pt", and "nn.module": the
// module tree as a JSON string, {"type": "nn.Linear", "config": {...}, "training": true,
// "children": [...]}, where a module used in two places is described at the first and
// {"same_as": "0"} (its first place, as in stateDict names) stands at the others, so that it
// loads as one module again. Callers that store more (optimizer state, the epoch) build on
// writeSafetensors/readSafetensors and the three helpers below.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// String metadata of a safetensors file (the format allows only strings).
using Metadata = std::map<std::string, std::string>;

/// Everything one safetensors file holds.
struct SafetensorsContents {
  /// CPU tensors on cpu:0, in the order of their data in the file, converted to float32:
  /// floating values to the nearest float32 (exact but for F64's), integers likewise (exact up
  /// to 2^24), BOOL as 0 and 1; with keepElementTypes, F16 and BF16 as float16 and bfloat16
  /// tensors of the file's bits.
  std::vector<NamedTensor> tensors;
  /// Each tensor's dtype in the file ("F32", "BF16", "I64"), in the order of `tensors`.
  std::vector<std::string> dtypes;
  /// The "__metadata__" entries.
  Metadata metadata;
};

/// Writes tensors (on any device: they are copied to the host) and metadata as a safetensors
/// file, tensors in the given order, each in its element type (F32, BF16 or F16). Atomic: a
/// temporary file in the same folder is written, fsync'd and renamed over `path`, so that on any
/// error `path` keeps its old contents.
void writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors, const Metadata& metadata);
/// Reads a safetensors file, checking every length, offset, dtype and shape before using it;
/// a truncated or corrupted file is an nn::Error naming the path (and the tensor at fault).
/// keepElementTypes reads F16 and BF16 tensors as tensors of those types, bit for bit (a state
/// dict of mixed element types round-trips), where the default converts every tensor to float32
/// (what the modules, all float32, load).
SafetensorsContents readSafetensors(const std::string& path, bool keepElementTypes = false);
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
/// How loadStateInto matches a file's tensors with a module's stateDict() names.
struct LoadOptions {
  /// All or nothing (the default): unless every tensor of the module is in the file with the
  /// module's shape and no other tensor is, nothing is copied and an nn::Error names the first
  /// that is not. Where false, the tensors that match are copied and the rest reported
  /// (PyTorch's load_state_dict(strict=False)).
  bool strict = true;
  /// Prefixes of the file's names replaced before matching, the first that fits: with
  /// {"features.", "0."}, the file's "features.3.weight" fills the module's "0.3.weight".
  std::vector<std::pair<std::string, std::string>> prefixes;
  /// Where set, then maps each file name to the module's name for it; an empty result leaves
  /// the file's tensor out (reported as ignored).
  std::function<std::string(const std::string& fileName)> rename;
  /// Where set, only the names (the module's, and the file's after renaming) for which it is
  /// true take part: the module's other tensors keep their values and are not missing, the
  /// file's are ignored, e.g. all but the classifier, to fine-tune with another class count.
  std::function<bool(const std::string& name)> filter;
};

/// What loadStateInto found, by the module's names (after the file's are renamed).
struct LoadReport {
  /// A tensor of both whose shapes differ.
  struct Mismatch {
    std::string name;
    std::vector<int64_t> moduleShape;
    std::vector<int64_t> fileShape;
  };
  /// A tensor of the file left out, and why.
  struct Ignored {
    std::string fileName;
    std::string reason;
  };
  /// The module's tensors copied from the file.
  std::vector<std::string> loaded;
  /// The module's tensors the file lacks; they keep their values.
  std::vector<std::string> missing;
  /// The file's tensors (renamed) that the module has no tensor for.
  std::vector<std::string> unexpected;
  /// Tensors of both with different shapes; the module's keep their values.
  std::vector<Mismatch> mismatched;
  /// The file's tensors left out by the options, and buffers the library keeps no counterpart
  /// of: PyTorch's BatchNorm `num_batches_tracked` (its batch count, which only its momentum=None
  /// reads; BatchNormalization's momentum is a number).
  std::vector<Ignored> ignored;

  /// True where everything matched: nothing missing, unexpected or mismatched.
  bool complete() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
  /// One line per kind that is not empty, naming each tensor ("missing: fc.weight [10, 512]").
  std::string toString() const;
};

/// Loads the tensors of a file into an existing module, as `options` say (by default all or
/// nothing, as loadStateDict). The file needs no module tree: safetensors files written by
/// PyTorch load too, in every dtype it writes.
LoadReport loadStateInto(Module& module, const std::string& path, const LoadOptions& options = {});
/// The same, from tensors in memory (`source` starts every error message).
LoadReport loadStateDict(Module& module, const std::vector<NamedTensor>& tensors, const std::string& source,
                         const LoadOptions& options);

}  // namespace nn

// nn::readTorch7 and nn::loadTorch7: files written by Lua Torch's torch.save (".t7", binary
// mode, little-endian, 8-byte longs as on 64-bit Linux), read as data: no Lua code in them is
// ever run, and a file holding any is refused.
//
// The format (torch7's File.lua writeObject, generic/Tensor.c and generic/Storage.c): each value
// is an int32 type, then its data. 0 nil; 1 a number (a double); 2 a string (int32 length, bytes);
// 5 a boolean (int32, 1 for true); 3 a table and 4 a Torch object, each an int32 index first: an
// index seen before is a reference to that value (shared values stay shared), otherwise the value
// follows. A table is an int32 count and as many key-value pairs; a Torch object is a version
// string "V <n>" and its class name (files from before versions have the class name alone), then
// its data: a Tensor is an int32 dimension count, int64 sizes, int64 strides, an int64 offset
// counted from 1 and its storage (a value: a Storage or nil); a Storage is an int64 count and its
// elements; any other class, a table of its fields. 6, 7 and 8 are Lua functions (bytecode).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/Module.h"
#include "nn/tensor/Tensor.h"

namespace nn {

struct Torch7Table;

/// One value of a Torch7 file: nil, a number, a string, a boolean, a table, a tensor (or a
/// storage) or an object of another class (an nn module) with its fields.
class Torch7Object {
 public:
  enum class Kind { Nil, Number, String, Boolean, Table, Tensor, Object };

  /// What this value is; the members below that do not belong to it keep their defaults.
  Kind kind = Kind::Nil;
  /// Number: its value (Lua numbers are doubles; table indices 1, 2, ... are numbers too).
  double number = 0;
  /// Boolean: its value.
  bool boolean = false;
  /// String: its bytes, as written (Lua strings may hold any byte).
  std::string string;
  /// Tensor and Object: the class name, "torch.FloatTensor", "torch.LongStorage", "nn.Linear".
  std::string className;
  /// Tensor and Object: the class's version ("V 2" gives 2; 0 for files written before versions).
  int version = 0;
  /// Tensor: the elements as float32, on cpu:0, whatever the file's type (double, half, bytes,
  /// integers: exact up to 2^24), under the file's sizes and strides; tensors of one storage
  /// share one nn::Storage. A Storage is a 1-D tensor of its elements.
  Tensor tensor;

  /// Table: its entries; Object: its fields. An nn::Error for another kind.
  const Torch7Table& table() const;
  /// table()'s value under the string key `key`, or null where there is none.
  const Torch7Object* field(const std::string& key) const;
  /// The same for every reference to one table, object or tensor of the file, null for values
  /// that are not shared (numbers, strings, booleans, nil).
  const void* identity() const;
  /// "nil", "number", "string", "boolean", "table", "tensor", or the class name of an object.
  std::string describe() const;

 private:
  friend class Torch7Reader;
  // The entries, where this value owns them. A table or object that contains itself (a Lua
  // cycle) holds a weak reference at the inner place, so that no cycle of owners leaks.
  std::shared_ptr<const Torch7Table> table_;
  std::weak_ptr<const Torch7Table> cycle_;
};

/// The entries of a Lua table or the fields of an object, in the file's order (Lua's own order
/// is unspecified). Keys may be of any kind but nil; a list's keys are the numbers 1, 2, ...
struct Torch7Table {
  std::vector<std::pair<Torch7Object, Torch7Object>> entries;

  /// The value under the string key `key`, or null where there is none.
  const Torch7Object* find(const std::string& key) const;
  /// The value under the number `key` (a list's item: 1 for the first), or null.
  const Torch7Object* find(double key) const;
};

/// Reads the value a Torch7 file holds (a module, a table of tensors, ...). Every count, size,
/// stride and offset is checked against the file before it is used; a broken or hostile file
/// is an nn::Error naming `path`, the byte offset and what was expected there. Values nest at
/// most 200 levels deep, and what the reader builds takes at most 32 times the file's bytes
/// plus 1 MB. A Lua function anywhere in the file is refused.
Torch7Object readTorch7(const std::string& path);

/// Reads a Torch7 file that holds a model and rebuilds it from this library's modules, on
/// cpu:0, with its weights, running statistics and training modes: nn.Sequential,
/// nn.ConcatTable, nn.Linear, nn.SpatialConvolution(MM), nn.SpatialDilatedConvolution,
/// nn.(Spatial)BatchNormalization, nn.SpatialMaxPooling, nn.SpatialAveragePooling, nn.ReLU,
/// nn.Threshold, nn.Tanh, nn.Sigmoid, nn.View, nn.Reshape, nn.CAddTable, nn.Identity,
/// nn.Dropout, nn.LogSoftMax, nn.SoftMax, cudnn's versions of these, and nn.DataParallelTable
/// as its first replica (docs/checkpoints.md, "Torch7 files", has the mapping in full). A
/// module in two places of the file is one module in two places here. Any other class is an
/// nn::Error naming it and its place ("model.t7: modules[3]: class nn.Foo is not supported").
ModulePtr loadTorch7(const std::string& path);

}  // namespace nn

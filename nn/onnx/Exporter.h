// nn::onnx::Exporter: what a module's ONNX export writes with (nn/onnx/Export.h). An export is
// a function registered for a module type name; given the module and its input (the graph's
// value and the example activity it holds), it adds nodes and returns its output's value. A
// container's export exports its children through module(), which runs the child's forward
// on the example, so that every export sees real sizes. A module of one's own:
//
//   nn::onnx::ExportRegistration scaleExport("custom.Scale",
//       [](nn::onnx::Exporter& e, nn::Module& m, const nn::onnx::Traced& in, const nn::Activity&) {
//         auto& scale = dynamic_cast<Scale&>(m);
//         return nn::onnx::Value(e.op("Mul", {in.value.name, e.tensor(scale.weight)}));
//       });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nn/core/Activity.h"
#include "nn/core/Module.h"

namespace nn::onnx {

/// A value of the graph: the name of a tensor, or a table of values (an nn::Activity's side
/// in the graph).
struct Value {
  Value() = default;
  /// The tensor of the graph named `tensorName`.
  Value(std::string tensorName) : name(std::move(tensorName)) {}  // NOLINT: implicit, as a tensor
  /// A table of `items`, in order.
  static Value table(std::vector<Value> items);

  /// Whether this is a table (items) rather than a tensor (name).
  bool isTable = false;
  /// The tensor's name in the graph (a node output, an input or an initializer); empty for a table.
  std::string name;
  /// A table's values, in order; empty for a tensor.
  std::vector<Value> items;
};

/// A value with what it holds when the model runs on the example input.
struct Traced {
  /// Its name (or names) in the graph.
  Value value;
  /// What it holds on the example input: tensors or tables of the same structure as value.
  Activity example;
  /// With a dynamic batch, what it holds on the example input at a second batch size
  /// (Note [A second batch size], Export.cpp); empty otherwise. A size that is the batch
  /// differs between the two; one that is not does not.
  Activity atOtherBatch;
};

/// A node attribute's value: ONNX's INT, FLOAT, STRING, INTS or FLOATS.
using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;
/// A node's attributes, as (name, value) pairs in order.
using Attributes = std::vector<std::pair<std::string, Attribute>>;

/// What an export function writes the graph with: nodes, constants, initializers, and its children's
/// exports (module()). Made by exportOnnx for one export.
class Exporter {
 public:
  class Graph;
  /// Writes into `graph` (exportOnnx's) the export of `root`, whose stateDict names the initializers.
  Exporter(Graph& graph, Module& root, bool dynamicBatch);

  /// Adds a node of operator `opType` (ONNX's default domain) and returns the name of its one
  /// output.
  std::string op(const std::string& opType, const std::vector<std::string>& inputs, const Attributes& attributes = {});
  /// The same with `outputs` outputs, their names in order.
  std::vector<std::string> ops(const std::string& opType, const std::vector<std::string>& inputs,
                               const Attributes& attributes, int outputs);
  /// A parameter or buffer of the model as an initializer under its stateDict name, once
  /// however often it is asked for; another tensor as a new constant.
  std::string tensor(const Tensor& t);
  /// Constant tensors: int64 of shape [n] (or a scalar), float of the given shape.
  std::string int64s(const std::vector<int64_t>& values);
  /// A constant int64 scalar (shape []).
  std::string int64Scalar(int64_t value);
  /// A constant float tensor of `shape`, `values` in row-major order.
  std::string floats(const std::vector<float>& values, const std::vector<int64_t>& shape);
  /// A constant float scalar (shape []).
  std::string floatScalar(float value);

  /// Exports `module` on `input`: its nodes, its output's value and example. Refuses a module
  /// whose type has no export, naming it and its place in the tree.
  Traced module(Module& module, const Traced& input);

  /// Whether dimension 0 of the graph's inputs is the batch, of any size.
  bool dynamicBatch() const { return dynamicBatch_; }
  /// Throws an nn::Error naming the module being exported, its place in the tree and `why`.
  [[noreturn]] void refuse(const std::string& why) const;
  /// "nn.Linear at 3.1 of nn.Sequential": the module being exported, for messages.
  std::string where() const;

 private:
  Graph& graph_;
  Module& root_;
  bool dynamicBatch_;
  // The modules being exported, outermost first, with their places ("3.1").
  std::vector<std::pair<Module*, std::string>> stack_;
};

/// How the modules of one type are exported: the nodes for `input`, returning the output's
/// value. `output` is the module's output for the example (from its forward).
using ExportFunction =
    std::function<Value(Exporter& exporter, Module& module, const Traced& input, const Activity& output)>;

/// Registers the export of modules whose typeName() is `typeName`, replacing one registered
/// before.
void registerExport(const std::string& typeName, ExportFunction function);
/// Whether modules of `typeName` can be exported.
bool hasExport(const std::string& typeName);

/// Registers an export when constructed: a static one registers it before main() (see the file comment).
struct ExportRegistration {
  /// Calls registerExport(typeName, function).
  ExportRegistration(const std::string& typeName, ExportFunction function) {
    registerExport(typeName, std::move(function));
  }
};

}  // namespace nn::onnx

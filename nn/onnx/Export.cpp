// The ONNX model around the module exports: graph inputs and outputs, initializers, nodes, the
// registry of exports, and the checks before the file is written. The protobuf classes are
// those of Debian's libonnx (generated from ONNX's own onnx-ml.proto), and the checks are
// ONNX's checker and strict shape inference.
#include "nn/onnx/Export.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "nn/io/AtomicFile.h"
#include "nn/onnx/Exporter.h"
#include "nn/onnx/Onnx.h"
#include "nn/tensor/Error.h"

namespace nn {
namespace onnx {

namespace {

constexpr int64_t kOpset = 17;
// The IR version of ONNX 1.12, which opset 17 came with.
constexpr int64_t kIrVersion = 8;

std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<std::string, ExportFunction>& registry() {
  static std::unordered_map<std::string, ExportFunction> exports;
  return exports;
}

ExportFunction findExport(const std::string& typeName) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = registry().find(typeName);
  return it == registry().end() ? ExportFunction() : it->second;
}

// A copy of `a` that no later forward overwrites (modules reuse their outputs).
Activity deepCopy(const Activity& a) {
  if (a.isTensor()) return Activity(a.tensor().clone());
  std::vector<Activity> items;
  items.reserve(a.size());
  for (const Activity& item : a.table()) items.push_back(deepCopy(item));
  return Activity(Table(std::move(items)));
}

bool sameStructure(const Value& value, const Activity& example) {
  if (value.isTable != example.isTable()) return false;
  if (!value.isTable) return !value.name.empty();
  if (value.items.size() != example.size()) return false;
  for (size_t i = 0; i < value.items.size(); ++i)
    if (!sameStructure(value.items[i], example[i])) return false;
  return true;
}

}  // namespace

Value Value::table(std::vector<Value> items) {
  Value v;
  v.isTable = true;
  v.items = std::move(items);
  return v;
}

void registerExport(const std::string& typeName, ExportFunction function) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[typeName] = std::move(function);
}

bool hasExport(const std::string& typeName) { return static_cast<bool>(findExport(typeName)); }

// The model being written, and what the exports have put in it so far.
class Exporter::Graph {
 public:
  explicit Graph(::onnx::GraphProto& graph) : graph_(graph) {}

  std::string newName(const std::string& stem) { return stem + "_" + std::to_string(names_++); }

  ::onnx::NodeProto& addNode(const std::string& opType, const std::string& place) {
    ::onnx::NodeProto* node = graph_.add_node();
    node->set_op_type(opType);
    node->set_name(newName("/" + (place.empty() ? "" : place + "/") + opType));
    return *node;
  }

  // An initializer of float32 values, named `name`.
  void addFloats(const std::string& name, const std::vector<float>& values, const std::vector<int64_t>& shape) {
    ::onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  }

  void addInt64s(const std::string& name, const std::vector<int64_t>& values, const std::vector<int64_t>& shape) {
    ::onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }

  // The model's parameters and buffers by their data and sizes, with their stateDict names.
  std::map<std::pair<const float*, std::vector<int64_t>>, std::string> stateNames;
  // With a dynamic batch, each module's output at the second batch size, for the check of the
  // finished model (Note [A second batch size]).
  struct Trace {
    std::string where;
    Value value;
    Activity atOtherBatch;
  };
  std::vector<Trace> traces;
  // The initializers written for them so far.
  std::map<std::pair<const float*, std::vector<int64_t>>, std::string> written;

 private:
  ::onnx::GraphProto& graph_;
  int64_t names_ = 0;
};

Exporter::Exporter(Graph& graph, Module& root, bool dynamicBatch)
    : graph_(graph), root_(root), dynamicBatch_(dynamicBatch) {}

std::vector<std::string> Exporter::ops(const std::string& opType, const std::vector<std::string>& inputs,
                                       const Attributes& attributes, int outputs) {
  ::onnx::NodeProto& node = graph_.addNode(opType, stack_.empty() ? std::string() : stack_.back().second);
  for (const std::string& input : inputs) node.add_input(input);
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) {
    names.push_back(node.name() + (outputs > 1 ? ":" + std::to_string(i) : std::string()));
    node.add_output(names.back());
  }
  for (const auto& [name, value] : attributes) {
    ::onnx::AttributeProto* a = node.add_attribute();
    a->set_name(name);
    if (const auto* i = std::get_if<int64_t>(&value)) {
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(*i);
    } else if (const auto* f = std::get_if<float>(&value)) {
      a->set_type(::onnx::AttributeProto::FLOAT);
      a->set_f(*f);
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      a->set_type(::onnx::AttributeProto::STRING);
      a->set_s(*s);
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      a->set_type(::onnx::AttributeProto::INTS);
      for (int64_t v : *is) a->add_ints(v);
    } else {
      a->set_type(::onnx::AttributeProto::FLOATS);
      for (float v : std::get<std::vector<float>>(value)) a->add_floats(v);
    }
  }
  return names;
}

std::string Exporter::op(const std::string& opType, const std::vector<std::string>& inputs,
                         const Attributes& attributes) {
  return ops(opType, inputs, attributes, 1).front();
}

std::string Exporter::tensor(const Tensor& t) {
  NN_CHECK(t.numel() > 0, where() << ": an export asked for an initializer of an empty tensor");
  const auto key = std::make_pair(static_cast<const float*>(t.data()), t.sizes());
  if (auto it = graph_.written.find(key); it != graph_.written.end()) return it->second;
  auto state = graph_.stateNames.find(key);
  const std::string name = state != graph_.stateNames.end() ? state->second : graph_.newName("/constant");
  graph_.addFloats(name, t.toVector(), t.sizes());
  graph_.written[key] = name;
  return name;
}

std::string Exporter::int64s(const std::vector<int64_t>& values) {
  const std::string name = graph_.newName("/constant");
  graph_.addInt64s(name, values, {static_cast<int64_t>(values.size())});
  return name;
}

std::string Exporter::int64Scalar(int64_t value) {
  const std::string name = graph_.newName("/constant");
  graph_.addInt64s(name, {value}, {});
  return name;
}

std::string Exporter::floats(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  const std::string name = graph_.newName("/constant");
  graph_.addFloats(name, values, shape);
  return name;
}

std::string Exporter::floatScalar(float value) { return floats({value}, {}); }

Traced Exporter::module(Module& module, const Traced& input) {
  // The module's place: its index among its parent's children, after the parent's place.
  std::string place;
  if (!stack_.empty()) {
    const auto& [parent, parentPlace] = stack_.back();
    place = parentPlace;
    const std::vector<ModulePtr>& siblings = parent->children();
    for (size_t i = 0; i < siblings.size(); ++i)
      if (siblings[i].get() == &module) {
        place = parentPlace.empty() ? std::to_string(i) : parentPlace + "." + std::to_string(i);
        break;
      }
  }
  stack_.emplace_back(&module, place);
  struct Pop {
    std::vector<std::pair<Module*, std::string>>& stack;
    ~Pop() { stack.pop_back(); }
  } pop{stack_};

  ExportFunction function = findExport(module.typeName());
  if (!function) refuse("has no ONNX export (nn::onnx::registerExport gives a module of one's own its export)");
  // On copies, so that a module working in place leaves the examples of its input as they were;
  // the example's forward last, so that the state an export may read is the example's.
  Activity atOtherBatch = dynamicBatch_ ? deepCopy(module.forward(deepCopy(input.atOtherBatch))) : Activity();
  Activity output = deepCopy(module.forward(deepCopy(input.example)));
  Value value = function(*this, module, input, output);
  if (!sameStructure(value, output))
    refuse("its export returned " + std::string(value.isTable ? "a table" : "a tensor") +
           " of another structure than its output, " + output.describe());
  if (dynamicBatch_) graph_.traces.push_back({where(), value, atOtherBatch});
  return Traced{std::move(value), std::move(output), std::move(atOtherBatch)};
}

std::string Exporter::where() const {
  if (stack_.empty()) return "nn.exportOnnx";
  const auto& [module, place] = stack_.back();
  std::string s = "nn.exportOnnx: " + module->typeName();
  if (place.empty()) return s + " (the exported module)";
  s += " at " + place + " (in ";
  for (size_t i = 0; i + 1 < stack_.size(); ++i) s += (i ? " > " : "") + stack_[i].first->typeName();
  return s + ")";
}

void Exporter::refuse(const std::string& why) const { throw Error(where() + ": " + why); }

}  // namespace onnx

namespace {

// The most bytes of parameters and buffers a model may have: a protobuf message's 2 GiB, less
// 64 MiB for the graph's nodes and names.
constexpr int64_t kMaxInitializerBytes = (int64_t{2} << 30) - (int64_t{64} << 20);

// Note [A second batch size]
// With a dynamic batch, an export cannot tell from the example alone which of its sizes is the
// batch: View(2, -1) on a batch of 2 looks as if it kept the batch, and a Reshape to [0, 6]
// written for it gives [5, 6] at a batch of 5 where the module gives [2, 15]. So the model runs
// twice as it is traced, on the example and on the example at a second batch size, one that no
// size of the example input has (otherBatch), and ONNX's shape inference, given that batch,
// must find every module's output with the sizes the module gives it: an export that wrote one
// of the example's sizes where the batch belongs fails the check, naming the module. The graph's
// outputs declare the batch where a dimension follows it in both runs, a size where both runs
// agree, and leave the rest open (a Concat along dimension 0 has twice the batch).

// The examples' batch: dimension 0 of every tensor of the input, which must agree.
int64_t batchOf(const Activity& example, int64_t batch = -1) {
  if (example.isTable()) {
    for (const Activity& item : example.table()) batch = batchOf(item, batch);
    return batch;
  }
  const Tensor& t = example.tensor();
  if (t.dim() == 0 || t.numel() == 0) return batch;  // refused by addInputs, naming it
  NN_CHECK(batch < 0 || t.size(0) == batch, "nn.exportOnnx: the example inputs' dimension 0, the batch, differs: "
                                                << batch << " and " << t.size(0) << " (OnnxOptions::dynamicBatch)");
  return t.size(0);
}

void collectSizes(const Activity& a, std::set<int64_t>& sizes) {
  if (a.isTable()) {
    for (const Activity& item : a.table()) collectSizes(item, sizes);
    return;
  }
  sizes.insert(a.tensor().sizes().begin(), a.tensor().sizes().end());
}

// The second batch size: above the example's, and none of the example input's sizes.
int64_t otherBatch(const Activity& example) {
  std::set<int64_t> sizes;
  collectSizes(example, sizes);
  int64_t batch = std::max<int64_t>(batchOf(example), 0) + 1;
  while (sizes.count(batch)) ++batch;
  return batch;
}

// The example with `batch` samples: its own repeated in turn.
Activity withBatch(const Activity& example, int64_t batch) {
  if (example.isTable()) {
    std::vector<Activity> items;
    for (const Activity& item : example.table()) items.push_back(withBatch(item, batch));
    return Activity(Table(std::move(items)));
  }
  const Tensor& t = example.tensor();
  if (t.dim() == 0 || t.numel() == 0) return Activity(t.clone());  // refused by addInputs
  std::vector<int64_t> sizes = t.sizes();
  sizes[0] = batch;
  Tensor out = Tensor::empty(sizes, t.device());
  for (int64_t i = 0; i < batch; ++i) out.select(0, i).copy_(t.select(0, i % t.size(0)));
  return Activity(out);
}

// A graph input or output named `name`: the example's sizes, with a dynamic batch the batch
// where a dimension follows it from `example` to `atOtherBatch` (an input's dimension 0) and
// no size where the two differ otherwise.
void addValueInfo(::onnx::ValueInfoProto& info, const std::string& name, const Tensor& example,
                  const Tensor& atOtherBatch, int64_t batch, int64_t other, const OnnxOptions& options) {
  info.set_name(name);
  ::onnx::TypeProto_Tensor* type = info.mutable_type()->mutable_tensor_type();
  type->set_elem_type(::onnx::TensorProto::FLOAT);
  ::onnx::TensorShapeProto* shape = type->mutable_shape();
  for (int d = 0; d < example.dim(); ++d) {
    const int64_t size = example.size(d);
    ::onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (!options.dynamicBatch || atOtherBatch.size(d) == size)
      dim->set_dim_value(size);
    else if (size == batch && atOtherBatch.size(d) == other)
      dim->set_dim_param(options.batchName);
  }
}

// The graph's inputs for the example: one per tensor of it, named after `name`.
onnx::Value addInputs(::onnx::GraphProto& graph, const Activity& example, const Activity& atOtherBatch,
                      const std::string& name, int64_t batch, int64_t other, const OnnxOptions& options) {
  if (example.isTable()) {
    std::vector<onnx::Value> items;
    for (size_t i = 0; i < example.size(); ++i)
      items.push_back(addInputs(graph, example[i], options.dynamicBatch ? atOtherBatch[i] : example[i],
                                name + "." + std::to_string(i), batch, other, options));
    return onnx::Value::table(std::move(items));
  }
  const Tensor& t = example.tensor();
  NN_CHECK(t.numel() > 0, "nn.exportOnnx: the example input " << name << " is empty");
  NN_CHECK(!options.dynamicBatch || t.dim() >= 1, "nn.exportOnnx: the example input "
                                                      << name << " is a scalar, which has no batch dimension "
                                                      << "(OnnxOptions::dynamicBatch)");
  addValueInfo(*graph.add_input(), name, t, atOtherBatch.tensor(), batch, other, options);
  return onnx::Value(name);
}

// The graph's outputs: an Identity from each tensor of `value` to its output name.
void addOutputs(onnx::Exporter& exporter, ::onnx::GraphProto& graph, const onnx::Value& value,
                const onnx::Traced& traced, const std::string& name, int64_t batch, int64_t other,
                const OnnxOptions& options) {
  if (value.isTable) {
    for (size_t i = 0; i < value.items.size(); ++i) {
      const onnx::Traced item{value.items[i], traced.example[i],
                              options.dynamicBatch ? traced.atOtherBatch[i] : traced.example[i]};
      addOutputs(exporter, graph, value.items[i], item, name + "." + std::to_string(i), batch, other, options);
    }
    return;
  }
  const std::string inner = exporter.op("Identity", {value.name});
  // The node's output takes the graph output's name.
  for (::onnx::NodeProto& node : *graph.mutable_node())
    for (std::string& output : *node.mutable_output())
      if (output == inner) output = name;
  addValueInfo(*graph.add_output(), name, traced.example.tensor(),
               (options.dynamicBatch ? traced.atOtherBatch : traced.example).tensor(), batch, other, options);
}

// Restores training mode on the way out, if the module was in it.
struct EvaluationMode {
  explicit EvaluationMode(Module& m) : module(m), wasTraining(m.isTraining()) { module.evaluate(); }
  ~EvaluationMode() {
    if (wasTraining) module.training();
  }
  Module& module;
  bool wasTraining;
};

// Sizes as messages write them: "[2, 15]", "?" for a size shape inference left open.
std::string sizesString(const std::vector<int64_t>& sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s << (i ? ", " : "") << (sizes[i] < 0 ? std::string("?") : std::to_string(sizes[i]));
  return s.str() + "]";
}

// Each module's output at the second batch size against the sizes that shape inference finds for
// it (Note [A second batch size]); `shapes` by value name, -1 for a size left open.
void checkTrace(const std::string& where, const onnx::Value& value, const Activity& atOtherBatch, int64_t other,
                const std::map<std::string, std::vector<int64_t>>& shapes) {
  if (value.isTable) {
    for (size_t i = 0; i < value.items.size(); ++i) checkTrace(where, value.items[i], atOtherBatch[i], other, shapes);
    return;
  }
  auto it = shapes.find(value.name);
  if (it == shapes.end()) return;  // an initializer, or a value inference gave no shape
  const std::vector<int64_t>& inferred = it->second;
  const std::vector<int64_t>& actual = atOtherBatch.tensor().sizes();
  bool same = inferred.size() == actual.size();
  for (size_t d = 0; same && d < actual.size(); ++d) same = inferred[d] < 0 || inferred[d] == actual[d];
  NN_CHECK(same, where << ": its export holds for the example's batch only: at a batch of " << other
                       << " the ONNX model gives " << sizesString(inferred) << " where the module gives "
                       << sizesString(actual) << " (a size equal to the example's batch taken for the batch, or the "
                       << "batch taken for a size); OnnxOptions::dynamicBatch false exports fixed sizes");
}

// ONNX's checker, and its strict shape inference; with a dynamic batch, inference at the second
// batch size, against the traces (Note [A second batch size]).
void check(const ::onnx::ModelProto& model, const std::vector<onnx::Exporter::Graph::Trace>& traces, int64_t other,
           bool dynamicBatch) {
  ::onnx::ModelProto inferred = model;
  try {
    ::onnx::checker::check_model(model);
    // The outputs' declared sizes are the traces' own: left open here, so that a trace that
    // does not hold is named by checkTrace.
    if (dynamicBatch) {
      for (::onnx::ValueInfoProto& input : *inferred.mutable_graph()->mutable_input())
        input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(other);
      for (::onnx::ValueInfoProto& output : *inferred.mutable_graph()->mutable_output())
        output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
    ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    throw Error(std::string("nn.exportOnnx: the model fails ONNX's checks (an export wrote a node wrong): ") +
                e.what());
  }
  if (!dynamicBatch) return;
  std::map<std::string, std::vector<int64_t>> shapes;
  const ::onnx::GraphProto& graph = inferred.graph();
  for (const auto* infos : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const ::onnx::ValueInfoProto& info : *infos) {
      if (!info.type().tensor_type().has_shape()) continue;
      std::vector<int64_t>& sizes = shapes[info.name()];
      for (const auto& dim : info.type().tensor_type().shape().dim())
        sizes.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
  for (const auto& trace : traces) checkTrace(trace.where, trace.value, trace.atOtherBatch, other, shapes);
}

}  // namespace

std::string exportOnnxToString(Module& module, const Activity& exampleInput, const OnnxOptions& options) {
  NN_CHECK(!options.inputName.empty() && !options.outputName.empty() && options.inputName != options.outputName,
           "nn.exportOnnx: the input and output names must be given and differ, got '" << options.inputName << "' and '"
                                                                                       << options.outputName << "'");
  // The model's initializers hold every parameter and buffer; a protobuf message holds at most
  // 2 GiB. Refused before anything is built (and copied for the checks): such a model would
  // need its weights as external data, which this exporter does not write.
  std::set<std::pair<const float*, std::vector<int64_t>>> counted;
  int64_t stateBytes = 0;
  auto count = [&](const Tensor& t) {
    if (counted.insert({t.data(), t.sizes()}).second) stateBytes += t.numel() * static_cast<int64_t>(sizeof(float));
  };
  for (const NamedParameter& p : module.namedParameters()) count(p.value);
  for (const NamedTensor& b : module.namedBuffers()) count(b.value);
  NN_CHECK(stateBytes <= kMaxInitializerBytes, "nn.exportOnnx: the model's parameters and buffers take "
                                                   << stateBytes
                                                   << " bytes, more than an ONNX file without external data can hold ("
                                                   << kMaxInitializerBytes << " of protobuf's 2 GiB)");
  EvaluationMode evaluation(module);

  ::onnx::ModelProto model;
  model.set_ir_version(onnx::kIrVersion);
  model.set_producer_name("nn");
  ::onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(onnx::kOpset);
  ::onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(options.graphName);

  onnx::Exporter::Graph state(graph);
  for (const NamedParameter& p : module.namedParameters()) state.stateNames[{p.value.data(), p.value.sizes()}] = p.name;
  for (const NamedTensor& b : module.namedBuffers()) state.stateNames[{b.value.data(), b.value.sizes()}] = b.name;
  onnx::Exporter exporter(state, module, options.dynamicBatch);

  const int64_t batch = options.dynamicBatch ? batchOf(exampleInput) : 0;
  const int64_t other = options.dynamicBatch ? otherBatch(exampleInput) : 0;
  onnx::Traced input{onnx::Value(), onnx::deepCopy(exampleInput),
                     options.dynamicBatch ? withBatch(exampleInput, other) : Activity()};
  input.value = addInputs(graph, input.example, input.atOtherBatch, options.inputName, batch, other, options);
  onnx::Traced output = exporter.module(module, input);
  addOutputs(exporter, graph, output.value, output, options.outputName, batch, other, options);

  check(model, state.traces, other, options.dynamicBatch);
  NN_CHECK(
      model.ByteSizeLong() <= static_cast<size_t>(std::numeric_limits<int>::max()),
      "nn.exportOnnx: the model takes " << model.ByteSizeLong() << " bytes, more than a protobuf message may (2 GiB)");
  std::string bytes;
  NN_CHECK(model.SerializeToString(&bytes), "nn.exportOnnx: the model could not be serialised");
  return bytes;
}

void exportOnnx(Module& module, const Activity& exampleInput, const std::string& path, const OnnxOptions& options) {
  checkWritable(path);
  writeFileAtomically(path, exportOnnxToString(module, exampleInput, options));
}

void checkOnnxFile(const std::string& path) {
  try {
    ::onnx::checker::check_model(path);
  } catch (const std::exception& e) {
    throw Error("nn.checkOnnxFile: " + path + ": " + e.what());
  }
}

}  // namespace nn

// The ONNX exports of the library's modules (nn/onnx/Exporter.h), one registration per module
// type. Each writes the module's evaluation-mode forward in ONNX opset 17 operators, with the
// sizes it needs read from the example, and refuses what ONNX cannot express as the module
// computes it.
#include <cmath>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "nn/onnx/Exporter.h"

namespace nn::onnx {

namespace {

using Ints = std::vector<int64_t>;

const Tensor& exampleTensor(Exporter& e, const Traced& t, const char* what = "input") {
  if (!t.example.isTensor()) e.refuse(std::string("expected a tensor ") + what + ", got a table");
  return t.example.tensor();
}

const Table& exampleTable(Exporter& e, const Traced& t) {
  if (!t.example.isTable()) e.refuse("expected a table input, got a tensor " + t.example.tensor().shapeString());
  return t.example.table();
}

Traced item(const Traced& t, size_t i) {
  return Traced{t.value.items[i], t.example[i], t.atOtherBatch.isTable() ? t.atOtherBatch[i] : Activity()};
}

// An operator of ONNX's that takes [N, C, H, W] on a [C, H, W] input too: given a batch of one
// and the batch taken away after.
template <typename F>
Value spatial(Exporter& e, const Traced& in, F&& op) {
  const Tensor& x = exampleTensor(e, in);
  if (x.dim() == 4) return op(in.value.name);
  if (x.dim() != 3) e.refuse("expected a [N, C, H, W] or [C, H, W] input, got " + x.shapeString());
  const std::string y = op(e.op("Unsqueeze", {in.value.name, e.int64s({0})}));
  return e.op("Squeeze", {y, e.int64s({0})});
}

// A dimension counted from the end where negative, for a tensor of `dims` dimensions.
int64_t positive(int64_t dim, int64_t dims) { return dim < 0 ? dim + dims : dim; }

// Refuses an operation along the batch dimension where its size is not fixed.
void checkNotBatch(Exporter& e, int64_t dim, const char* what) {
  if (dim == 0 && e.dynamicBatch())
    e.refuse(
        std::string(what) +
        " along dimension 0, which is the batch of any size (OnnxOptions::dynamicBatch false exports fixed sizes)");
}

// A reshape of x to the example output's sizes; with a dynamic batch, dimension 0 is kept
// from the input (Reshape's 0), which the output must share with it.
Value reshapeLike(Exporter& e, const Traced& in, const Tensor& out) {
  const Tensor& x = exampleTensor(e, in);
  Ints shape = out.sizes();
  if (e.dynamicBatch()) {
    if (x.dim() == 0 || out.dim() == 0 || x.size(0) != out.size(0))
      e.refuse("its output " + out.shapeString() + " does not keep the input's batch dimension (" + x.shapeString() +
               "); OnnxOptions::dynamicBatch false exports fixed sizes");
    shape[0] = 0;
  }
  return e.op("Reshape", {in.value.name, e.int64s(shape)});
}

// A parameter broadcast against x as nn/modules/BroadcastShape.h lines it up: NumPy's rule, or the
// elements of one sample.
std::string broadcastParameter(Exporter& e, const Tensor& x, const Tensor& parameter) {
  Ints sizes = parameter.sizes();
  while (static_cast<int>(sizes.size()) > x.dim() && sizes.front() == 1) sizes.erase(sizes.begin());
  bool numpy = static_cast<int>(sizes.size()) <= x.dim();
  for (size_t k = 0; numpy && k < sizes.size(); ++k) {
    const int64_t s = sizes[sizes.size() - 1 - k], xs = x.size(x.dim() - 1 - static_cast<int>(k));
    numpy = s == xs || s == 1;
  }
  const std::string name = e.tensor(parameter);
  if (numpy) return sizes == parameter.sizes() ? name : e.op("Reshape", {name, e.int64s(sizes)});
  if (x.dim() >= 2 && parameter.numel() * x.size(0) == x.numel()) {
    Ints sample(x.sizes().begin() + 1, x.sizes().end());
    return e.op("Reshape", {name, e.int64s(sample)});
  }
  e.refuse("a parameter " + parameter.shapeString() + " that lines up with the input " + x.shapeString() +
           " only as a whole");
}

Ints pads(int64_t padH, int64_t padW) { return {padH, padW, padH, padW}; }

// ONNX's pooled size where ceil_mode is set (its specification's formula), to compare with the
// module's: Torch7 drops a last window that would start in the right padding, ONNX does not.
int64_t onnxCeilSize(int64_t in, int64_t k, int64_t stride, int64_t pad) {
  return (in + 2 * pad - k + stride - 1) / stride + 1;
}

Attributes poolAttributes(Exporter& e, const PoolingWindow& w, const Tensor& x, const Tensor& out) {
  const int64_t dW = w.dW == 0 ? w.kW : w.dW, dH = w.dH == 0 ? w.kH : w.dH;
  if (w.ceilMode) {
    const int h = x.dim() - 2, wd = x.dim() - 1;
    if (onnxCeilSize(x.size(h), w.kH, dH, w.padH) != out.size(h) ||
        onnxCeilSize(x.size(wd), w.kW, dW, w.padW) != out.size(wd))
      e.refuse("ceil mode for an input " + x.shapeString() + " whose last window would start in the padding");
  }
  return {{"kernel_shape", Ints{w.kH, w.kW}},
          {"strides", Ints{dH, dW}},
          {"pads", pads(w.padH, w.padW)},
          {"ceil_mode", int64_t{w.ceilMode ? 1 : 0}}};
}

// The class dimension of SoftMax and LogSoftMax: the last of [C] and [N, C], the planes of
// [C, H, W] and [N, C, H, W].
int64_t classAxis(Exporter& e, const Tensor& x) {
  if (x.dim() < 1 || x.dim() > 4) e.refuse("expected an input of 1 to 4 dimensions, got " + x.shapeString());
  return x.dim() == 1 || x.dim() == 3 ? 0 : 1;
}

// The dimension Sum, Mean and Max reduce (nn/modules/ReducedDimension.h's rule).
int64_t reducedAxis(const Tensor& x, int dim, int nInputDims) {
  if (dim < 0) return dim + x.dim();
  return nInputDims >= 0 && x.dim() > nInputDims ? dim + 1 : dim;
}

// A table of tensors folded with a binary operator, first to last.
Value fold(Exporter& e, const Traced& in, const char* op) {
  const Table& items = exampleTable(e, in);
  if (items.empty()) e.refuse("expected a non-empty table");
  std::string acc = in.value.items[0].name;
  for (size_t i = 1; i < items.size(); ++i) {
    if (in.value.items[i].isTable) e.refuse("expected a table of tensors");
    acc = e.op(op, {acc, in.value.items[i].name});
  }
  return acc;
}

void flatten(const Value& v, std::vector<Value>& into) {
  if (!v.isTable)
    into.push_back(v);
  else
    for (const Value& item : v.items) flatten(item, into);
}

template <typename M>
M& as(Module& m) {
  return dynamic_cast<M&>(m);
}

// Registers `f` for each type name.
void registerFor(std::initializer_list<const char*> typeNames, const ExportFunction& f) {
  for (const char* name : typeNames) registerExport(name, f);
}

// --- containers --------------------------------------------------------------------------

const bool kContainers = [] {
  registerExport("nn.Sequential", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    Traced t = in;
    for (const ModulePtr& child : m.children()) t = e.module(*child, t);
    return t.value;
  });
  registerExport("nn.ConcatTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    std::vector<Value> items;
    for (const ModulePtr& child : m.children()) items.push_back(e.module(*child, in).value);
    return Value::table(std::move(items));
  });
  registerExport("nn.ParallelTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Table& t = exampleTable(e, in);
    if (t.size() < m.children().size())
      e.refuse("expected a table of at least " + std::to_string(m.children().size()) + " items");
    std::vector<Value> items;
    for (size_t i = 0; i < m.children().size(); ++i) items.push_back(e.module(*m.children()[i], item(in, i)).value);
    return Value::table(std::move(items));
  });
  registerExport("nn.Concat", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    std::vector<std::string> parts;
    for (const ModulePtr& child : m.children()) parts.push_back(e.module(*child, in).value.name);
    return Value(e.op("Concat", parts, {{"axis", int64_t{as<Concat>(m).dim()}}}));
  });
  // Its first replica: the others hold the same parameters.
  registerExport("nn.DataParallelTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    return e.module(*m.children().front(), in).value;
  });
  return true;
}();

// --- tables ------------------------------------------------------------------------------

const bool kTables = [] {
  registerExport("nn.CAddTable",
                 [](Exporter& e, Module&, const Traced& in, const Activity&) { return fold(e, in, "Add"); });
  registerExport("nn.CMulTable",
                 [](Exporter& e, Module&, const Traced& in, const Activity&) { return fold(e, in, "Mul"); });
  registerExport("nn.CSubTable",
                 [](Exporter& e, Module&, const Traced& in, const Activity&) { return fold(e, in, "Sub"); });
  registerExport("nn.CDivTable",
                 [](Exporter& e, Module&, const Traced& in, const Activity&) { return fold(e, in, "Div"); });
  registerExport("nn.JoinTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Table& t = exampleTable(e, in);
    const int64_t dim = as<JoinTable>(m).dimensionFor(t[0].tensor());
    checkNotBatch(e, dim, "joining");
    std::vector<std::string> parts;
    for (const Value& v : in.value.items) parts.push_back(v.name);
    return Value(e.op("Concat", parts, {{"axis", dim}}));
  });
  registerExport("nn.SplitTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const int64_t dim = as<SplitTable>(m).dimensionFor(x);
    checkNotBatch(e, dim, "splitting");
    const int n = static_cast<int>(x.size(static_cast<int>(dim)));
    const std::vector<std::string> parts =
        n == 1 ? std::vector<std::string>{in.value.name} : e.ops("Split", {in.value.name}, {{"axis", dim}}, n);
    std::vector<Value> items;
    for (const std::string& p : parts) items.push_back(e.op("Squeeze", {p, e.int64s({dim})}));
    return Value::table(std::move(items));
  });
  registerExport("nn.SelectTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Table& t = exampleTable(e, in);
    const int64_t i = positive(as<SelectTable>(m).options().index, static_cast<int64_t>(t.size()));
    return in.value.items.at(static_cast<size_t>(i));
  });
  registerExport("nn.NarrowTable", [](Exporter& e, Module& m, const Traced& in, const Activity& out) {
    const Table& t = exampleTable(e, in);
    const auto& o = as<NarrowTable>(m).options();
    const auto n = static_cast<int64_t>(t.size());
    const int64_t offset = positive(o.offset, n), length = o.length < 0 ? n - offset + o.length + 1 : o.length;
    if (offset < 0 || length < 0 || offset + length > n || static_cast<size_t>(length) != out.size())
      e.refuse("a range that does not match its output");
    return Value::table(std::vector<Value>(in.value.items.begin() + offset, in.value.items.begin() + offset + length));
  });
  registerExport("nn.FlattenTable", [](Exporter&, Module&, const Traced& in, const Activity&) {
    std::vector<Value> items;
    flatten(in.value, items);
    return Value::table(std::move(items));
  });
  registerExport("nn.Identity", [](Exporter&, Module&, const Traced& in, const Activity&) { return in.value; });
  return true;
}();

// --- layers with parameters --------------------------------------------------------------

const bool kLayers = [] {
  registerExport("nn.Linear", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    auto& linear = as<Linear>(m);
    const Tensor& x = exampleTensor(e, in);
    const bool bias = linear.options().bias;
    if (x.dim() == 2) {
      std::vector<std::string> inputs{in.value.name, e.tensor(linear.weight)};
      if (bias) inputs.push_back(e.tensor(linear.bias));
      return Value(e.op("Gemm", inputs, {{"transB", int64_t{1}}}));
    }
    const std::string wt = e.op("Transpose", {e.tensor(linear.weight)}, {{"perm", Ints{1, 0}}});
    const std::string y = e.op("MatMul", {in.value.name, wt});
    return Value(bias ? e.op("Add", {y, e.tensor(linear.bias)}) : y);
  });
  registerFor({"nn.SpatialConvolution", "nn.SpatialDilatedConvolution"},
              [](Exporter& e, Module& m, const Traced& in, const Activity&) {
                auto& conv = as<SpatialConvolution>(m);
                const auto& o = conv.options();
                return spatial(e, in, [&](const std::string& x) {
                  return e.op("Conv", {x, e.tensor(conv.weight), e.tensor(conv.bias)},
                              {{"kernel_shape", Ints{o.kH, o.kW}},
                               {"strides", Ints{o.dH, o.dW}},
                               {"pads", pads(o.padH, o.padW)},
                               {"dilations", Ints{o.dilH, o.dilW}},
                               {"group", o.groups}});
                });
              });
  registerExport("nn.SpatialFullConvolution", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    auto& conv = as<SpatialFullConvolution>(m);
    const auto& o = conv.options();
    return spatial(e, in, [&](const std::string& x) {
      return e.op("ConvTranspose", {x, e.tensor(conv.weight), e.tensor(conv.bias)},
                  {{"kernel_shape", Ints{o.kH, o.kW}},
                   {"strides", Ints{o.dH, o.dW}},
                   {"pads", pads(o.padH, o.padW)},
                   {"output_padding", Ints{o.adjH, o.adjW}}});
    });
  });
  registerFor({"nn.BatchNormalization", "nn.SpatialBatchNormalization"},
              [](Exporter& e, Module& m, const Traced& in, const Activity&) {
                auto& bn = as<BatchNormalization>(m);
                const Tensor& x = exampleTensor(e, in);
                if (x.dim() < 2) e.refuse("expected an input [N, C, ...], got " + x.shapeString());
                const auto& o = bn.options();
                const std::vector<float> ones(static_cast<size_t>(o.nOutput), 1.f), zeros(ones.size(), 0.f);
                const std::string scale = o.affine ? e.tensor(bn.weight) : e.floats(ones, {o.nOutput});
                const std::string shift = o.affine ? e.tensor(bn.bias) : e.floats(zeros, {o.nOutput});
                return Value(e.op("BatchNormalization",
                                  {in.value.name, scale, shift, e.tensor(bn.runningMean), e.tensor(bn.runningVar)},
                                  {{"epsilon", static_cast<float>(o.eps)}}));
              });
  // Opset 17's LayerNormalization over the last dimensions; its scale is required (ones without
  // affine parameters).
  registerExport("nn.LayerNorm", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    auto& ln = as<LayerNorm>(m);
    const Tensor& x = exampleTensor(e, in);
    const Ints& shape = ln.normalizedShape();
    const int64_t axis = x.dim() - static_cast<int64_t>(shape.size());
    checkNotBatch(e, axis, "a normalisation");
    const std::vector<float> ones(static_cast<size_t>(product(shape)), 1.f), zeros(ones.size(), 0.f);
    const std::string scale = ln.elementwiseAffine() ? e.tensor(ln.weight) : e.floats(ones, shape);
    const std::string shift = ln.elementwiseAffine() ? e.tensor(ln.bias) : e.floats(zeros, shape);
    return Value(e.op("LayerNormalization", {in.value.name, scale, shift},
                      {{"axis", axis}, {"epsilon", static_cast<float>(ln.eps())}}));
  });
  // Opset 17 has no GroupNormalization (opset 18's scales groups, not channels): [N, C, *] seen as
  // [N, G, C / G * positions], whose InstanceNormalization normalises each (sample, group), then
  // the sizes back and the per-channel weight and bias broadcast over the positions.
  registerExport("nn.GroupNorm", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    auto& gn = as<GroupNorm>(m);
    const Tensor& x = exampleTensor(e, in);
    if (x.dim() < 2) e.refuse("expected an input [N, C, *], got " + x.shapeString());
    const int64_t groups = gn.numGroups();
    const std::vector<float> ones(static_cast<size_t>(groups), 1.f), zeros(ones.size(), 0.f);
    const std::string grouped = e.op("Reshape", {in.value.name, e.int64s({0, groups, -1})});
    const std::string normalised = e.op("InstanceNormalization",
                                        {grouped, e.floats(ones, {groups}), e.floats(zeros, {groups})},
                                        {{"epsilon", static_cast<float>(gn.eps())}});
    Ints sizes = x.sizes();
    sizes[0] = 0;  // the batch of the input, whatever its size
    std::string y = e.op("Reshape", {normalised, e.int64s(sizes)});
    if (!gn.affine()) return Value(y);
    Ints channel(static_cast<size_t>(x.dim() - 1), 1);
    channel[0] = gn.numChannels();
    y = e.op("Mul", {y, e.op("Reshape", {e.tensor(gn.weight), e.int64s(channel)})});
    return Value(e.op("Add", {y, e.op("Reshape", {e.tensor(gn.bias), e.int64s(channel)})}));
  });
  registerExport("nn.PReLU", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    auto& prelu = as<PReLU>(m);
    const Tensor& x = exampleTensor(e, in);
    std::string slope = e.tensor(prelu.weight);
    if (prelu.options().nOutputPlane > 0) {
      // Planes along dimension 1 ([N, C, ...]) or 0 (a vector), the slope broadcast along the rest.
      const int channel = x.dim() >= 2 ? 1 : 0;
      Ints shape(static_cast<size_t>(x.dim() - channel), 1);
      shape[0] = prelu.options().nOutputPlane;
      slope = e.op("Reshape", {slope, e.int64s(shape)});
    }
    return Value(e.op("PRelu", {in.value.name, slope}));
  });
  registerExport("nn.LookupTable", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    const std::string indices = e.op("Cast", {in.value.name}, {{"to", int64_t{7}}});  // INT64
    return Value(e.op("Gather", {e.tensor(as<LookupTable>(m).weight), indices}, {{"axis", int64_t{0}}}));
  });
  registerExport("nn.Mul", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    return Value(e.op("Mul", {in.value.name, e.tensor(as<Mul>(m).weight)}));
  });
  registerExport("nn.CMul", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    return Value(e.op("Mul", {in.value.name, broadcastParameter(e, exampleTensor(e, in), as<CMul>(m).weight)}));
  });
  registerExport("nn.Add", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    return Value(e.op("Add", {in.value.name, broadcastParameter(e, exampleTensor(e, in), as<Add>(m).bias)}));
  });
  return true;
}();

// --- element-wise ------------------------------------------------------------------------

// An operator of one input and fixed attributes.
ExportFunction unary(const char* op, Attributes attributes = {}) {
  return [op, attributes](Exporter& e, Module&, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(e.op(op, {in.value.name}, attributes));
  };
}

// x where x > threshold, else `value` (Torch7's Threshold), and Clip between two constants.
std::string threshold(Exporter& e, const std::string& x, float threshold, const std::string& value) {
  return e.op("Where", {e.op("Greater", {x, e.floatScalar(threshold)}), x, value});
}

std::string clip(Exporter& e, const std::string& x, float low, float high) {
  return e.op("Clip", {x, e.floatScalar(low), e.floatScalar(high)});
}

const bool kElementwise = [] {
  registerExport("nn.ReLU", unary("Relu"));
  registerExport("nn.Tanh", unary("Tanh"));
  registerExport("nn.Sigmoid", unary("Sigmoid"));
  registerExport("nn.SoftSign", unary("Softsign"));
  // log(sigmoid(x)) as -softplus(-x), as the module computes it: ONNX Runtime's Log(Sigmoid(x))
  // is -inf from x = -30 on, where its sigmoid reaches 0.
  registerExport("nn.LogSigmoid", [](Exporter& e, Module&, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(e.op("Neg", {e.op("Softplus", {e.op("Neg", {in.value.name})})}));
  });
  // x sigmoid(x): opset 17 has no SiLU (Swish came in opset 24).
  registerExport("nn.SiLU", [](Exporter& e, Module&, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(e.op("Mul", {in.value.name, e.op("Sigmoid", {in.value.name})}));
  });
  // 0.5 x (1 + erf(x / sqrt 2)), or 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): opset 17
  // has no Gelu (it came in opset 20), so each form is composed of the operators it is made of.
  registerExport("nn.GELU", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    const std::string& x = in.value.name;
    std::string t;
    if (as<GELU>(m).options().approximate == "tanh") {
      const std::string cube = e.op("Mul", {e.op("Mul", {x, x}), x});
      const std::string inner =
          e.op("Add", {x, e.op("Mul", {cube, e.floatScalar(math::activation::GELUTanh::kKappa)})});
      t = e.op("Tanh", {e.op("Mul", {inner, e.floatScalar(math::activation::GELUTanh::kBeta)})});
    } else {
      t = e.op("Erf", {e.op("Mul", {x, e.floatScalar(math::activation::GELU::kSqrtHalf)})});
    }
    const std::string half = e.op("Mul", {x, e.floatScalar(0.5f)});
    return Value(e.op("Mul", {half, e.op("Add", {t, e.floatScalar(1.f)})}));
  });
  registerExport("nn.ReLU6", [](Exporter& e, Module&, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(clip(e, in.value.name, 0.f, 6.f));
  });
  registerExport("nn.HardTanh", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    const auto& o = as<HardTanh>(m).options();
    return Value(clip(e, in.value.name, static_cast<float>(o.min), static_cast<float>(o.max)));
  });
  registerExport("nn.LeakyReLU", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(
        e.op("LeakyRelu", {in.value.name}, {{"alpha", static_cast<float>(as<LeakyReLU>(m).options().negval)}}));
  });
  registerExport("nn.ELU", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(e.op("Elu", {in.value.name}, {{"alpha", static_cast<float>(as<ELU>(m).options().alpha)}}));
  });
  registerExport("nn.Threshold", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    const auto& o = as<Threshold>(m).options();
    return Value(
        threshold(e, in.value.name, static_cast<float>(o.threshold), e.floatScalar(static_cast<float>(o.value))));
  });
  // log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (Torch7's SoftPlus).
  registerExport("nn.SoftPlus", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    const auto& o = as<SoftPlus>(m).options();
    const auto beta = static_cast<float>(o.beta);
    const std::string& x = in.value.name;
    const std::string bx = beta == 1.f ? x : e.op("Mul", {x, e.floatScalar(beta)});
    std::string y = e.op("Softplus", {bx});
    if (beta != 1.f) y = e.op("Div", {y, e.floatScalar(beta)});
    return Value(e.op("Where", {e.op("Greater", {bx, e.floatScalar(static_cast<float>(o.threshold))}), x, y}));
  });
  registerExport("nn.SoftMax", [](Exporter& e, Module&, const Traced& in, const Activity&) {
    return Value(e.op("Softmax", {in.value.name}, {{"axis", classAxis(e, exampleTensor(e, in))}}));
  });
  registerExport("nn.LogSoftMax", [](Exporter& e, Module&, const Traced& in, const Activity&) {
    return Value(e.op("LogSoftmax", {in.value.name}, {{"axis", classAxis(e, exampleTensor(e, in))}}));
  });
  // The identity in evaluation mode, which the export is in.
  registerFor({"nn.Dropout", "nn.SpatialDropout"}, [](Exporter& e, Module&, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return in.value;
  });
  registerExport("nn.MulConstant", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(
        e.op("Mul", {in.value.name, e.floatScalar(static_cast<float>(as<MulConstant>(m).options().constant))}));
  });
  registerExport("nn.AddConstant", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    exampleTensor(e, in);
    return Value(
        e.op("Add", {in.value.name, e.floatScalar(static_cast<float>(as<AddConstant>(m).options().constant))}));
  });
  return true;
}();

// --- shapes ------------------------------------------------------------------------------

const bool kShapes = [] {
  registerFor({"nn.View", "nn.Reshape"}, [](Exporter& e, Module&, const Traced& in, const Activity& out) {
    return reshapeLike(e, in, out.tensor());
  });
  registerExport("nn.Transpose", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    Ints perm(static_cast<size_t>(x.dim()));
    for (int64_t d = 0; d < x.dim(); ++d) perm[static_cast<size_t>(d)] = d;
    const Ints& pairs = as<Transpose>(m).options().pairs;
    for (size_t p = 0; p + 1 < pairs.size(); p += 2) {
      const int64_t a = positive(pairs[p], x.dim()), b = positive(pairs[p + 1], x.dim());
      if (a < 0 || b < 0 || a >= x.dim() || b >= x.dim()) e.refuse("a pair of dimensions outside the input");
      std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
    }
    return Value(e.op("Transpose", {in.value.name}, {{"perm", perm}}));
  });
  registerExport("nn.Narrow", [](Exporter& e, Module& m, const Traced& in, const Activity& out) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<Narrow>(m).options();
    const int64_t dim = positive(o.dim, x.dim());
    checkNotBatch(e, dim, "narrowing");
    const int64_t size = x.size(static_cast<int>(dim)), offset = positive(o.offset, size);
    const int64_t length = o.length < 0 ? size - offset + o.length + 1 : o.length;
    if (out.tensor().dim() != x.dim() || out.tensor().size(static_cast<int>(dim)) != length)
      e.refuse("a slice that does not match its output " + out.tensor().shapeString());
    return Value(e.op("Slice", {in.value.name, e.int64s({offset}), e.int64s({offset + length}), e.int64s({dim})}));
  });
  registerExport("nn.Select", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<Select>(m).options();
    const int64_t dim = positive(o.dim, x.dim());
    checkNotBatch(e, dim, "selecting");
    const int64_t index = positive(o.index, x.size(static_cast<int>(dim)));
    return Value(e.op("Gather", {in.value.name, e.int64Scalar(index)}, {{"axis", dim}}));
  });
  registerExport("nn.SpatialZeroPadding", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<SpatialZeroPadding>(m).options();
    if (x.dim() != 3 && x.dim() != 4) e.refuse("expected a [N, C, H, W] or [C, H, W] input, got " + x.shapeString());
    Ints begin(static_cast<size_t>(x.dim()), 0), end(begin.size(), 0);
    begin[begin.size() - 2] = o.padTop;
    begin[begin.size() - 1] = o.padLeft;
    end[end.size() - 2] = o.padBottom;
    end[end.size() - 1] = o.padRight;
    begin.insert(begin.end(), end.begin(), end.end());
    return Value(e.op("Pad", {in.value.name, e.int64s(begin)}));
  });
  return true;
}();

// --- pooling and resampling --------------------------------------------------------------

const bool kPooling = [] {
  registerExport("nn.SpatialMaxPooling", [](Exporter& e, Module& m, const Traced& in, const Activity& out) {
    const Attributes a = poolAttributes(e, as<SpatialMaxPooling>(m).options(), exampleTensor(e, in), out.tensor());
    return spatial(e, in, [&](const std::string& x) { return e.op("MaxPool", {x}, a); });
  });
  registerExport("nn.SpatialAveragePooling", [](Exporter& e, Module& m, const Traced& in, const Activity& out) {
    const auto& o = as<SpatialAveragePooling>(m).options();
    Attributes a = poolAttributes(e, o.window, exampleTensor(e, in), out.tensor());
    a.emplace_back("count_include_pad", int64_t{o.countIncludePad ? 1 : 0});
    return spatial(e, in, [&](const std::string& x) { return e.op("AveragePool", {x}, a); });
  });
  // GlobalAveragePool for one cell, an AveragePool where the sizes divide; windows that
  // overlap (sizes that do not divide) have no ONNX operator.
  registerExport("nn.SpatialAdaptiveAveragePooling", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<SpatialAdaptiveAveragePooling>(m).options();
    if (x.dim() < 3) e.refuse("expected a [N, C, H, W] or [C, H, W] input, got " + x.shapeString());
    const int64_t h = x.size(x.dim() - 2), w = x.size(x.dim() - 1);
    if (o.oH == 1 && o.oW == 1)
      return spatial(e, in, [&](const std::string& v) { return e.op("GlobalAveragePool", {v}); });
    if (h % o.oH != 0 || w % o.oW != 0)
      e.refuse("planes of " + std::to_string(h) + "x" + std::to_string(w) + " pooled to " + std::to_string(o.oH) + "x" +
               std::to_string(o.oW) + ": overlapping windows");
    const Ints kernel{h / o.oH, w / o.oW};
    return spatial(e, in, [&](const std::string& v) {
      return e.op("AveragePool", {v}, {{"kernel_shape", kernel}, {"strides", kernel}});
    });
  });
  registerExport("nn.SpatialUpSamplingNearest", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    if (x.dim() != 3 && x.dim() != 4) e.refuse("expected a [N, C, H, W] or [C, H, W] input, got " + x.shapeString());
    const auto s = static_cast<float>(as<SpatialUpSamplingNearest>(m).options().scale);
    std::vector<float> scales(static_cast<size_t>(x.dim()), 1.f);
    scales[scales.size() - 2] = scales[scales.size() - 1] = s;
    return Value(e.op("Resize", {in.value.name, "", e.floats(scales, {x.dim()})},
                      {{"mode", std::string("nearest")},
                       {"coordinate_transformation_mode", std::string("asymmetric")},
                       {"nearest_mode", std::string("floor")}}));
  });
  return true;
}();

// --- reductions --------------------------------------------------------------------------

const bool kReductions = [] {
  registerExport("nn.Max", [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<Max>(m).options();
    const int64_t axis = reducedAxis(x, o.dim, o.nInputDims);
    checkNotBatch(e, axis, "reducing");
    return Value(e.op("ReduceMax", {in.value.name}, {{"axes", Ints{axis}}, {"keepdims", int64_t{x.dim() == 1}}}));
  });
  registerFor({"nn.Sum", "nn.Mean"}, [](Exporter& e, Module& m, const Traced& in, const Activity&) {
    const Tensor& x = exampleTensor(e, in);
    const auto& o = as<Sum>(m).options();
    const int64_t axis = reducedAxis(x, o.dim, o.nInputDims);
    checkNotBatch(e, axis, "reducing");
    const int64_t keep = !o.squeeze || x.dim() == 1;
    if (o.sizeAverage) return Value(e.op("ReduceMean", {in.value.name}, {{"axes", Ints{axis}}, {"keepdims", keep}}));
    return Value(e.op("ReduceSum", {in.value.name, e.int64s({axis})}, {{"keepdims", keep}}));
  });
  return true;
}();

}  // namespace

}  // namespace nn::onnx

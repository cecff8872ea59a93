// nn::exportOnnx: a module in evaluation mode written as an ONNX model (opset 17, float32), to
// serve with ONNX Runtime, TensorRT or OpenVINO what was trained here. The model is traced
// through the module tree once on an example input: each module's export (nn/onnx/Exporter.h)
// writes its nodes and reads the sizes it needs from the example's, and the finished model
// passes ONNX's checker and its strict shape inference before the file is written (whole or
// not at all). Parameters and buffers of more than 2 GiB less 64 MiB (protobuf's limit) are
// refused before anything is built. Parameters and buffers become initializers under their stateDict names
// ("0.weight", "1.running_mean"), as PyTorch's export names them.
//
// Exported: Sequential, Concat, ConcatTable, ParallelTable and the table modules; Linear; the
// convolutions (plain, dilated, full); max, average and adaptive average pooling; batch
// normalisation (its running statistics); the activations, SoftMax and LogSoftMax; Dropout and
// SpatialDropout (the identity); View, Reshape, Transpose, Narrow, Select, Identity; zero
// padding and nearest up-sampling; LookupTable; MulConstant, AddConstant, Mul, Add, CMul; Max,
// Sum and Mean; a DataParallelTable as its first replica. Anything else is refused with an
// nn::Error naming the module and its place in the tree; a module of one's own registers its
// export with nn::onnx::registerExport.
#pragma once

#include <string>

#include "nn/core/Activity.h"
#include "nn/core/Module.h"

namespace nn {

/// How exportOnnx names and shapes the graph (the defaults suit most uses).
struct OnnxOptions {
  /// Dimension 0 of every input is the batch, of any size, named batchName in the file, and so
  /// is every dimension of an output that follows it (the model is traced at a second batch
  /// size to tell them; a module whose export holds for the example's batch only is refused,
  /// naming it); where false, every size is the example's.
  bool dynamicBatch = true;
  /// The name of the symbolic batch dimension (ONNX's dim_param), where dynamicBatch.
  std::string batchName = "batch";
  /// The graph's inputs and outputs: "input" for a tensor, "input.0", "input.1", ... (and
  /// "input.1.0" below) for the items of a table; the same for "output".
  std::string inputName = "input";
  /// The graph's outputs' name (or prefix, for a table), as inputName; the two must differ.
  std::string outputName = "output";
  /// The name of the ONNX graph (GraphProto.name).
  std::string graphName = "nn";
};

/// Writes `module`, run on `exampleInput` (on the module's device), to `path` as an ONNX
/// model. The module is put in evaluation mode for the export and back in training mode after
/// if it was in it. An nn::Error for a module without an export, a configuration ONNX cannot
/// express, or a path that cannot be written; the file is then left as it was.
void exportOnnx(Module& module, const Activity& exampleInput, const std::string& path,
                const OnnxOptions& options = {});

/// The serialised ONNX model that exportOnnx writes.
std::string exportOnnxToString(Module& module, const Activity& exampleInput, const OnnxOptions& options = {});

/// Throws an nn::Error with ONNX's checker's message unless the file at `path` is a valid ONNX
/// model (for tests and tools; exportOnnx checks what it writes itself).
void checkOnnxFile(const std::string& path);

}  // namespace nn

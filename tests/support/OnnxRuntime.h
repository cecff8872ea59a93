// Test support: exported ONNX models run by ONNX Runtime (PyPI's, in the virtual environment
// that tools/reference-venv.sh makes and tools/test.sh names in NN_REFERENCE_PYTHON), all
// runs of a test in one Python process (tests/reference/onnx_runtime.py).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nn/core/Activity.h"
#include "tests/support/TempDir.h"

namespace nn::test {

/// The Python with ONNX Runtime and TensorBoard given to the tests (NN_REFERENCE_PYTHON), or ""
/// where there is none; fails the test where the one given does not exist, or where
/// NN_REQUIRE_REFERENCES=1 (.ci/run) asks for one and none is given.
std::string referencePython();

/// The tensors of `a` under the names nn::exportOnnx gives the graph's inputs or outputs
/// ("input" for a tensor; "input.0", "input.1.0", ... for the items of tables).
std::vector<std::pair<std::string, Tensor>> namedTensors(const Activity& a, const std::string& name);

class OnnxRuntimeRuns {
 public:
  /// Queues a run of the model at `modelPath` on `input`; returns its index.
  size_t add(const std::string& modelPath, const Activity& input);
  /// Runs every queued run with `python`; throws with Python's output where it fails.
  void run(const std::string& python);
  /// Output `name` of run `index`, on the CPU.
  Tensor output(size_t index, const std::string& name) const;

 private:
  TempDir folder_;
  size_t runs_ = 0;
};

}  // namespace nn::test

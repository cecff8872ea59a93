#include "tests/support/OnnxRuntime.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/support/ExampleRun.h"

namespace nn::test {

namespace {

std::string runFolder(const TempDir& folder, size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "/run%06zu", index);
  return folder.path() + name;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

std::string referencePython() {
  const char* python = std::getenv("NN_REFERENCE_PYTHON");
  if (python != nullptr && *python != '\0') {
    if (!std::filesystem::exists(python)) FAIL("NN_REFERENCE_PYTHON=" << python << " does not exist");
    return python;
  }
  const char* required = std::getenv("NN_REQUIRE_REFERENCES");
  if (required != nullptr && std::string(required) == "1")
    FAIL(
        "NN_REQUIRE_REFERENCES=1 asks for ONNX Runtime and TensorBoard, and no NN_REFERENCE_PYTHON gives them "
        "(tools/reference-venv.sh)");
  return "";
}

std::vector<std::pair<std::string, Tensor>> namedTensors(const Activity& a, const std::string& name) {
  if (a.isTensor()) return {{name, a.tensor()}};
  std::vector<std::pair<std::string, Tensor>> all;
  for (size_t i = 0; i < a.size(); ++i) {
    auto items = namedTensors(a[i], name + "." + std::to_string(i));
    all.insert(all.end(), items.begin(), items.end());
  }
  return all;
}

size_t OnnxRuntimeRuns::add(const std::string& modelPath, const Activity& input) {
  const std::string dir = runFolder(folder_, runs_);
  std::filesystem::create_directory(dir);
  writeText(dir + "/model", modelPath);
  for (const auto& [name, t] : namedTensors(input, "input")) {
    std::string shape;
    for (int64_t s : t.sizes()) shape += std::to_string(s) + " ";
    writeText(dir + "/" + name + ".shape", shape);
    const std::vector<float> values = t.toVector();
    std::ofstream out(dir + "/" + name + ".bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
    if (!out) throw std::runtime_error("cannot write " + dir + "/" + name + ".bin");
  }
  return runs_++;
}

void OnnxRuntimeRuns::run(const std::string& python) {
  const ExampleResult r = runCommand({python, "tests/reference/onnx_runtime.py", folder_.path()}, {}, 600);
  if (r.exitStatus != 0)
    throw std::runtime_error("ONNX Runtime failed (exit status " + std::to_string(r.exitStatus) + "):\n" +
                             r.stdoutText + r.stderrText);
}

Tensor OnnxRuntimeRuns::output(size_t index, const std::string& name) const {
  const std::string base = runFolder(folder_, index) + "/" + name + ".out";
  std::ifstream shapeFile(base + ".shape");
  if (!shapeFile)
    throw std::runtime_error("ONNX Runtime wrote no output " + name + " for run " + std::to_string(index));
  std::vector<int64_t> sizes;
  int64_t count = 1;
  for (int64_t s; shapeFile >> s;) {
    sizes.push_back(s);
    count *= s;
  }
  std::vector<float> values(static_cast<size_t>(count));
  std::ifstream in(base + ".bin", std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!in) throw std::runtime_error("short output " + base + ".bin");
  return Tensor::fromVector(sizes, values);
}

}  // namespace nn::test

// Test support: running an example (LeNet, the residual network) as a child process on small synthetic data, as a
// user runs it, with its exit status, its output and a signal sent at a chosen moment.
#pragma once

#include <string>
#include <vector>

#include "tests/support/TempDir.h"

namespace nn::test {

/// Writes a learnable split in Fashion-MNIST's file layout into `dir`: `n` images of 28 x 28
/// where class c is a bright band at rows 2c..2c+3, plus noise, and their labels. `prefix` is
/// "train" or "t10k".
void writeSyntheticSplit(const TempDir& dir, const std::string& prefix, uint32_t n, uint32_t seed);

/// When to send a signal to the running example.
struct SignalPlan {
  /// SIGINT, SIGTERM, or 0 for none.
  int signal = 0;
  /// Sent once this file exists (a checkpoint written after the first epoch, say) and the
  /// example's standard output holds `afterOutput`; at once where both are empty.
  std::string afterFile;
  std::string afterOutput;
  /// Then waits this long before sending.
  double delaySeconds = 0;
};

struct ExampleResult {
  /// The exit status where the example exited, -1 where a signal killed it.
  int exitStatus = -1;
  /// The signal that killed it, 0 where it exited.
  int killedBy = 0;
  std::string stdoutText;
  std::string stderrText;
};

/// Runs examples/lenet with `args` and waits for it, at most `timeoutSeconds` (then kills it
/// and fails the test).
ExampleResult runExample(const std::vector<std::string>& args, const SignalPlan& plan = {},
                         double timeoutSeconds = 300);
/// Runs examples/<example> ("resnet", say) likewise.
ExampleResult runExample(const std::string& example, const std::vector<std::string>& args, const SignalPlan& plan = {},
                         double timeoutSeconds = 300);

/// Runs `command` (a program on PATH, or a path) likewise: `mpirun ... examples/lenet`, say.
ExampleResult runCommand(std::vector<std::string> command, const SignalPlan& plan = {}, double timeoutSeconds = 300);

/// The bytes of a file ("" where it cannot be read).
std::string fileBytes(const std::string& path);

}  // namespace nn::test

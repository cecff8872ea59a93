// The training program the examples share: an example names itself, sets the defaults of its
// flags and gives its network; trainMain does the rest (flags, Fashion-MNIST, the optimizers,
// one device or a DataParallelTable, checkpoints and --resume, metrics, progress, --profile).
//
//   int main(int argc, char** argv) {
//     examples::ExampleSettings settings{"lenet", {}, [] { return examples::lenet(); }};
//     return examples::trainMain(argc, argv, settings);
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/core/Module.h"

namespace examples {

/// The defaults of an example's flags (its --help shows them).
struct TrainingDefaults {
  int64_t epochs = 5;
  int64_t batchSize = 128;
  std::string optimizer = "sgd";
  /// --lr's default with --optimizer sgd; the others have Torch7's optim defaults.
  float sgdLearningRate = 0.05f;
  float momentum = 0.9f;
  float weightDecay = 5e-4f;
  float learningRateDecay = 2e-4f;
  int threads = 1;
  std::string devices = "cpu:0";
  /// --flip: mirror training images left to right at random (Fashion-MNIST's clothes are
  /// roughly symmetric).
  bool flip = false;
};

struct ExampleSettings {
  /// The program's name, in its usage and in its errors ("lenet: --epochs expects ...").
  std::string name;
  TrainingDefaults defaults;
  /// The network for [N, 1, 28, 28] images, giving log-probabilities of the 10 classes,
  /// initialised from nn::defaultGenerator() (seeded by --seed before the call).
  std::function<nn::ModulePtr()> model;
};

/// The devices of a --devices list ("cpu:0,cpu:1"); an nn::Error naming `program` for an empty one.
std::vector<nn::Device> parseDevices(const std::string& program, const std::string& list);

/// `model` set up to train on images that need no gradient (setGradInputNeeded(false)), moved to
/// the one device, or replicated over several by a DataParallelTable(0, flattenParams, useNCCL).
nn::ModulePtr placeOnDevices(nn::ModulePtr model, const std::vector<nn::Device>& devices);

/// Parses the flags and trains; returns the process's exit status (1 with a message on stderr
/// for bad flags or data, 128 + the signal after Ctrl-C or SIGTERM).
int trainMain(int argc, char** argv, const ExampleSettings& settings);

}  // namespace examples

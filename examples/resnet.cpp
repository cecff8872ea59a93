// A small residual network on Fashion-MNIST (examples/ResNet.h): the LeNet example's flags and
// training, with defaults chosen for this network. `resnet --help` lists the flags.
#include "examples/ResNet.h"
#include "examples/Trainer.h"

int main(int argc, char** argv) {
  examples::TrainingDefaults defaults;
  defaults.epochs = 5;
  defaults.sgdLearningRate = 0.1f;
  defaults.threads = 2;
  const examples::ExampleSettings settings{"resnet", defaults, [] { return examples::resnet(); }};
  return examples::trainMain(argc, argv, settings);
}

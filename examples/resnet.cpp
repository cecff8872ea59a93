// A small residual network on Fashion-MNIST (examples/ResNet.h): the LeNet example's flags and
// training, with defaults chosen for this network: data-parallel on cpu:0 and cpu:1, SGD with
// learning rate 0.1 decaying by 1e-3 a step, mirrored images, 12 epochs. `resnet --help` lists
// the flags.
#include "examples/ResNet.h"
#include "examples/Trainer.h"

int main(int argc, char** argv) {
  examples::TrainingDefaults defaults;
  defaults.epochs = 12;
  defaults.sgdLearningRate = 0.1f;
  defaults.learningRateDecay = 1e-3f;
  defaults.devices = "cpu:0,cpu:1";
  defaults.flip = true;
  const examples::ExampleSettings settings{"resnet", defaults, [] { return examples::resnet(); }};
  return examples::trainMain(argc, argv, settings);
}

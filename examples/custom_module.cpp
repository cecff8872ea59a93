// Modules of one's own in training (examples/CustomModules.h: my.Affine, a leaf with
// parameters, and my.Residual, a container): an MLP built with them trains on Fashion-MNIST
// with the LeNet example's flags, by default on cpu:0 and cpu:1 through a DataParallelTable,
// whose replicas are clones and so need the modules registered. `--save FILE` writes a
// checkpoint that nn::load rebuilds into the same modules. `custom_module --help` lists the flags.
#include "examples/CustomModules.h"
#include "examples/Trainer.h"

int main(int argc, char** argv) {
  examples::TrainingDefaults defaults;
  defaults.epochs = 3;
  defaults.devices = "cpu:0,cpu:1";
  const examples::ExampleSettings settings{"custom_module", defaults, [] { return my::mlp(); }};
  return examples::trainMain(argc, argv, settings);
}

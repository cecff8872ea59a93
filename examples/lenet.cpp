// LeNet on Fashion-MNIST: trains the network of Torch7's tutorials with SGD and momentum (or
// Adam, Adagrad, RMSprop), on one device or, with --devices listing several, through a
// DataParallelTable. `lenet --help` lists the flags (examples/Trainer.h).
#include "examples/LeNet.h"
#include "examples/Trainer.h"

int main(int argc, char** argv) {
  const examples::ExampleSettings settings{"lenet", examples::TrainingDefaults(), [] { return examples::lenet(); }};
  return examples::trainMain(argc, argv, settings);
}

// A training loop in which one rank misbehaves, for tests/distributed/distributed_test.sh: the job must end
// with a message naming that rank, within the group's timeout, and no rank may hang.
// Usage: distributed_faults throw|exit|skip-backward
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cunn/cunn.h"
#include "nn/distributed/DistributedDataParallelTable.h"
#include "nn/distributed/ProcessGroup.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: distributed_faults throw|exit|skip-backward\n");
    return 2;
  }
  const char* fault = argv[1];
  auto group = nn::ProcessGroup::world();
  group->setTimeoutSeconds(10);
  nn::manualSeed(0);
  auto net = std::make_shared<nn::Sequential>(
      std::vector<nn::ModulePtr>{nn::make<nn::Linear>(4, 3), nn::make<nn::LogSoftMax>()});
  nn::DistributedDataParallelTable model(net, group);
  nn::ClassNLLCriterion criterion;
  const nn::Tensor x = nn::Tensor::zeros({2, 4});
  const nn::Tensor y = nn::Tensor::fromVector({2}, {0, 1});
  const bool faulty = group->rank() == 1;
  for (int step = 0; step < 5; ++step) {
    if (faulty && step == 2) {
      // The library's own error, uncaught: an input of 5 features for Linear(4 -> 3).
      if (std::strcmp(fault, "throw") == 0) model.forward(nn::Tensor::zeros({2, 5}));
      if (std::strcmp(fault, "exit") == 0) std::exit(3);
    }
    model.forward(x);
    criterion.forward(model.output, y);
    if (faulty && step >= 2 && std::strcmp(fault, "skip-backward") == 0) continue;
    model.backward(x, criterion.backward(model.output, y));
  }
  std::printf("rank %d finished\n", group->rank());
  return 0;
}

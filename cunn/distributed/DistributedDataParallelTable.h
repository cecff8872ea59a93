// nn::DistributedDataParallelTable: one model trained by several processes (PyTorch's
// DistributedDataParallel), as a DataParallelTable trains it on several devices of one. Each
// process wraps its copy of the model, which may be a plain module or a DataParallelTable over
// the process's devices, feeds it its own shard of every batch (BatchOptions::shards) and calls
// forward, backward and its optimizer as usual: backward sums the gradients over the processes
// so that every process takes the same step.
//
//   auto group = nn::ProcessGroup::world();
//   auto model = std::make_shared<nn::DistributedDataParallelTable>(net, group);
//   nn::SGD sgd(model->getParameters(), options);
//   ... model->forward(x); model->backward(x, criterion.backward(out, y)); sgd.step();
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cunn/DataParallelSteps.h"
#include "cunn/distributed/ProcessGroup.h"
#include "nn/ActivityModule.h"
#include "nn/Container.h"

namespace nn {

class DistributedDataParallelTable : public ActivityModule<Container> {
 public:
  struct Options {
    /// Gradients become what one process computes on the global batch: each process's
    /// weighted by its share of the batch (its input's size along dimension 0), which is the
    /// plain average where the shards are equal. False sums them.
    bool average = true;
    /// The buffers (BatchNorm's running statistics): rank 0's broadcast before each forward in
    /// training mode (BroadcastFirst, as PyTorch's), or averaged over the processes after each
    /// backward (Average).
    BufferPolicy buffers = BufferPolicy::BroadcastFirst;
    /// Gradients are summed in pieces of at most this many megabytes each.
    double bucketMegabytes = 25;
  };

  /// Wraps `module`. A collective: every rank of `group` constructs its table with a model of
  /// the same structure and shapes (else an nn::Error on every rank naming the first
  /// difference), and every rank's parameters and buffers become rank 0's.
  DistributedDataParallelTable(ModulePtr module, std::shared_ptr<ProcessGroup> group, Options options);
  DistributedDataParallelTable(ModulePtr module, std::shared_ptr<ProcessGroup> group)
      : DistributedDataParallelTable(std::move(module), std::move(group), Options()) {}

  /// The wrapped module (the table's only child), for saving and evaluation.
  ModulePtr module() const { return modules_[0]; }
  ProcessGroup& group() const { return *group_; }
  const Options& options() const { return options_; }

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  /// The module's, then the gradients summed (or averaged) over the processes. Every rank
  /// calls it once per training forward; a rank that skipped one is an nn::Error there.
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;
  void setGradInputNeeded(bool needed) override;
  /// The module's own (so that the module and the table share one flat buffer of each, and
  /// a checkpoint of the module alone resumes with either).
  std::pair<Tensor, Tensor> getParameters() override { return module()->getParameters(); }
  std::string typeName() const override { return "nn.DistributedDataParallelTable"; }
  /// "nn.DistributedDataParallelTable(rank 0 of 2)", then the module as a child block.
  std::string toString() const override;

  /// The text every rank compares at construction: the module's description and each tensor of
  /// its state with its sizes.
  static std::string describeForCheck(Module& module);

 private:
  void checkSameModel();
  void broadcastState();
  void reduceGradients();
  // Takes the module's flat gradient and cuts it into buckets (again where it was re-flattened).
  void takeGradients();

  std::shared_ptr<ProcessGroup> group_;
  Options options_;
  // The flat gradient of the module's parameters (getParameters), and the first parameter's
  // gradient: when that stops pointing into the flat one, the parameters were flattened anew.
  Tensor flatGradients_;
  Tensor firstGradient_;
  // Views of flatGradients_ of at most bucketMegabytes each, from its end to its start (the
  // order in which backward finishes them).
  std::vector<Tensor> buckets_;
  std::vector<Tensor> buffers_;
  // {samples in this process's batch, step mod 1024, its square}, summed over the processes.
  Tensor meta_;
  // Training forwards so far: the step every process must agree on.
  int64_t steps_ = 0;
  int64_t batch_ = 0;
};

}  // namespace nn

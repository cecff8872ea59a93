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
#include <unordered_map>
#include <vector>

#include "nn/core/Container.h"
#include "nn/core/GradientObserver.h"
#include "nn/core/StatisticsGroup.h"
#include "nn/core/TableModule.h"
#include "nn/distributed/ProcessGroup.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/NoSync.h"

namespace nn {

/// PyTorch's DistributedDataParallel: one model trained by the processes of a ProcessGroup, gradients
/// summed (or averaged) over them in backward; see the file comment.
class DistributedDataParallelTable : public TableModule<Container>, private GradientObserver {
 public:
  /// How gradients and buffers are combined across the processes, and what the ranks must agree on.
  struct Options {
    /// Gradients become what one process computes on the global batch: each process's
    /// weighted by its share of the batch (its input's size along dimension 0), which is the
    /// plain average where the shards are equal: multiplied by its batch size before the sums,
    /// divided by the global batch after them. False sums them.
    bool average = true;
    /// The buffers (BatchNorm's running statistics): rank 0's broadcast before each forward in
    /// training mode (BroadcastFirst, as PyTorch's), or averaged over the processes after each
    /// backward (Average).
    BufferPolicy buffers = BufferPolicy::BroadcastFirst;
    /// Gradients are summed in buckets of at most this many megabytes each, from the last
    /// parameters to the first: each bucket's sum starts as soon as backward has finished its
    /// gradients, and goes on while backward computes those of the modules below. The first
    /// parameters' gradients, up to a parameter's end within 1 MB (or this size, where smaller),
    /// are the last bucket alone, so that the sum that no backward overlaps stays small.
    double bucketMegabytes = 25;
    /// The type the gradients travel in between the processes: Float32, or BFloat16, half the
    /// bytes (PyTorch DDP's bf16_compress_hook): each process adds what it receives in float32,
    /// and every process ends with the same sum, rounded to bfloat16
    /// (ProcessGroup::startAllReduceSumBfloat16). Gradients on CUDA devices are summed in float32.
    DType reduceType = DType::Float32;
    /// What every rank must have alike besides the model, a setting a line (a program's flags:
    /// "--batch-size 64"): compared at construction, before the model, a difference is an
    /// nn::Error on every rank naming the first line that differs. Ranks that train on other
    /// batch sizes, data or seeds otherwise go on with shards that overlap, or fail at the end
    /// of an epoch inside MPI. The checksum of each rank's program file (nn::buildIdentity())
    /// is compared first: a rank of another build is refused too.
    std::string configuration;
  };

  /// Wraps `module`. A collective: every rank of `group` constructs its table with the same
  /// options().configuration and a model of the same structure and shapes (else an nn::Error on
  /// every rank naming the first difference), and every rank's parameters and buffers become
  /// rank 0's.
  DistributedDataParallelTable(ModulePtr module, std::shared_ptr<ProcessGroup> group, Options options);
  /// Wraps `module` with the default Options (a collective, as above).
  DistributedDataParallelTable(ModulePtr module, std::shared_ptr<ProcessGroup> group)
      : DistributedDataParallelTable(std::move(module), std::move(group), Options()) {}

  /// The wrapped module (the table's only child), for saving and evaluation.
  ModulePtr module() const { return modules_[0]; }
  /// The processes the gradients are summed over.
  ProcessGroup& group() const { return *group_; }
  /// The options given at construction.
  const Options& options() const { return options_; }

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  /// The module's, with the gradients summed (or averaged) over the processes bucket by bucket
  /// as the module's children finish theirs; returns when every sum has completed. Every rank
  /// calls it once per training forward; a rank that skipped one is an nn::Error there.
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;
  void setGradInputNeeded(bool needed) override;
  /// The module's own (so that the module and the table share one flat buffer of each, and
  /// a checkpoint of the module alone resumes with either).
  std::pair<Tensor, Tensor> getParameters() override { return module()->getParameters(); }
  std::string typeName() const override { return "nn.DistributedDataParallelTable"; }
  /// "nn.DistributedDataParallelTable(rank 0 of 2)", then the module as a child block.
  std::string toString() const override;
  /// Per step, this rank's wait for the others after backward, for the gradients' last sums
  /// (profiling on; nn/core/Profiler.h).
  std::string profileDetail(const PassTime& step) const override;
  void resetProfileDetail() override;

  /// The text every rank compares at construction: the module's description and each tensor of
  /// its state with its sizes and the kind of its device (CPU or CUDA).
  static std::string describeForCheck(Module& module);

  /// Whether backward sums the gradients over the processes (true, the default). False
  /// accumulates them on each rank alone, for all but the last of the micro-batches of one
  /// optimizer step (PyTorch's no_sync(); NoSync below): their backward makes no collective, and
  /// the next synced backward sums everything accumulated since the last, weighted by the
  /// samples of all the forwards since (each micro-batch's loss scaled by its share of the
  /// rank's batch, through backward's scale, makes the step the one of the whole batch). Every
  /// rank must accumulate alike. nn::NoSync (nn/parallel/NoSync.h) sets it for a scope.
  void setSync(bool sync) { sync_ = sync; }
  /// Whether backward sums the gradients over the processes (setSync).
  bool sync() const { return sync_; }

 private:
  // A view of flatGradients_ whose sum over the processes starts once `remaining` is 0.
  struct Bucket {
    Tensor gradients;
    int64_t start = 0;
    int64_t remaining = 0;
  };
  // The part of one parameter's gradient in one bucket.
  struct Piece {
    size_t bucket;
    int64_t count;
  };

  // The configuration, then the model: alike on every rank.
  void checkSameRun();
  void broadcastState();
  // Takes the module's flat gradient and cuts it into buckets (again where it was re-flattened),
  // and finds which parameters each module of the tree holds.
  void takeGradients();
  // Starts the step's check (the meta sum) and makes every bucket wait for all its gradients.
  void beginStep();
  // Reads the meta sum, once waited for with the gradients': every rank at the same step, and
  // a global batch of some samples.
  void checkStep();
  void gradientsDone(const Module& module) override;
  // Starts the buckets, in order, whose gradients are all final.
  void startReadyBuckets();

  // The ranks as the StatisticsGroup of the child's passes (synchronised batch normalisation):
  // each double summed as two floats, its float and the rest, so that the totals keep about
  // twice float's digits.
  class RankStatistics : public StatisticsGroup {
   public:
    RankStatistics(ProcessGroup& group, const Options& options) : group_(group), options_(options) {}
    void allReduceSum(double* values, size_t n) override;
    /// Where the table averages, each rank's sums weighed by its batch: the scale the averaged
    /// gradient gives every sample (1 / the global batch), over this rank's (1 / its batch).
    void allReduceGradientSum(double* values, size_t n) override;
    /// This rank's samples in the forward whose backward comes next.
    void setSamples(int64_t samples) { samples_ = samples; }

   private:
    ProcessGroup& group_;
    const Options& options_;
    Tensor stage_;
    int64_t samples_ = 0;
  };

  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<RankStatistics> statistics_;
  Options options_;
  // The flat gradient of the module's parameters (getParameters), and the first parameter's
  // gradient: when that stops pointing into the flat one, the parameters were flattened anew.
  Tensor flatGradients_;
  Tensor firstGradient_;
  // Cut from flatGradients_'s end to its start (the order in which backward finishes them).
  std::vector<Bucket> buckets_;
  size_t nextBucket_ = 0;
  // Parameter p (in parameters() order) lies in pieces_[pieceStart_[p] .. pieceStart_[p + 1]).
  std::vector<Piece> pieces_;
  std::vector<size_t> pieceStart_;
  std::vector<char> parameterDone_;
  // The parameters (their indices) of each module of the tree whose gradients are final when
  // its accGradParameters returns: every module used once, not inside a DataParallelTable.
  std::unordered_map<const Module*, std::vector<size_t>> parametersOf_;
  std::vector<Tensor> buffers_;
  // {samples in this process's batch, step mod 1024, its square}, summed over the processes.
  Tensor meta_;
  // Training forwards so far: the step every process must agree on.
  int64_t steps_ = 0;
  // This rank's samples since the last synced backward, its weight in the average.
  int64_t batch_ = 0;
  bool stepBegun_ = false;
  bool sync_ = true;
  // The last backward was unsynced: the next forward adds its samples to batch_.
  bool accumulating_ = false;
  // Where profiling is on: the wait for the gradients' last sums (Note [One wait per step]).
  PassTime sumWait_;
};

}  // namespace nn

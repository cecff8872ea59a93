// nn::DataParallelTable: trains one module on several devices at once (Torch7's cunn
// DataParallelTable). The design: Note [Data parallel steps] at the top of DataParallelTable.cpp.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "nn/backend/Communicator.h"
#include "nn/core/Container.h"
#include "nn/core/Options.h"
#include "nn/core/TableModule.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DeviceThreads.h"
#include "nn/parallel/NoSync.h"
#include "nn/parallel/ReplicaStatistics.h"

namespace nn {

/// A buffer policy as files have always held it: 0 (BroadcastFirst) or 1 (Average).
template <>
struct FieldCodec<BufferPolicy> {
  /// 0 for BroadcastFirst, 1 for Average.
  static Config::Value write(BufferPolicy policy);
  /// An nn::Error naming `who` and the value for any integer but 0 and 1.
  static BufferPolicy read(const Config& config, const std::string& key, const std::string& who);
};

/// The table's arguments, from which its config (what nn::save writes and nn::load and
/// clone() rebuild from) and its toString() derive.
struct DataParallelTableOptions {
  /// The input dimension split across devices (0-based).
  int dim = 0;
  /// Keep each replica's parameters and gradients in one buffer each, so that a reduction or a
  /// broadcast is one call per buffer.
  bool flattenParams = true;
  /// NCCL where it can run (CUDA devices), else copies, said once on stderr.
  bool useNCCL = true;
  /// What syncParameters does with the replicas' buffers (BatchNorm running statistics); the
  /// first replica's are broadcast by default.
  BufferPolicy bufferPolicy = BufferPolicy::BroadcastFirst;
  /// The devices given to add(), replica i on devices[i]; empty until then, as add() gives
  /// them with the module.
  std::vector<Device> devices = {};

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("flattenParams", flattenParams);
    field("useNCCL", useNCCL);
    field("bufferPolicy", bufferPolicy);
    field("devices", devices);
  }
};

/// Torch7's cunn DataParallelTable: one module trained on several devices at once, each device running a
/// replica of it on its slice of the batch.
///
/// forward splits the input along dim() into one slice per device (scatter), runs every replica on its
/// slice on its device's own thread and concatenates their outputs on the first device (gather); backward
/// does the same with gradOutput and gradInput, then sums every replica's gradients into the first
/// replica's (reduce). The first replica is the table's only child: its parameters are the table's, the
/// ones an optimizer updates, and the others are refreshed from them before the next forward (broadcast).
///
///     auto dpt = std::make_shared<nn::DataParallelTable>(0);
///     dpt->add(model, {nn::Device::cuda(0), nn::Device::cuda(1)});
///
/// A table is used by one thread at a time; calls from another thread while one runs are an nn::Error.
class DataParallelTable : public WithOptions<DataParallelTableOptions, TableModule<Container>> {
 public:
  /// What happens to buffers (BatchNorm running statistics) of the replicas; the first
  /// replica's are broadcast by default.
  using BufferPolicy = ::nn::BufferPolicy;

  /// Torch7's arguments (see DataParallelTableOptions).
  explicit DataParallelTable(int dim, bool flattenParams = true, bool useNCCL = true)
      : DataParallelTable(Options{dim, flattenParams, useNCCL}) {}
  /// options.devices must be empty: add() gives the devices with the module.
  explicit DataParallelTable(const Options& options);
  ~DataParallelTable() override;
  /// The table of a saved config, its module (the first replica) added on the saved devices.
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Replicates `module` onto each device: the first replica is `module` itself, moved to
  /// devices[0], and the table's only child; the others are deep copies. Starts one thread per
  /// device. (Container::add, without devices, is hidden: a table's module comes with them.)
  DataParallelTable& add(ModulePtr module, const std::vector<Device>& devices);
  /// Runs init once on each device's thread, now (Torch7's threads()); the first CPU device's
  /// thread is the caller's (Note [The caller as the first device] in DeviceThreads.cpp).
  DataParallelTable& threads(const std::function<void(const Device&)>& init);
  /// Copies the first replica's parameters (and buffers, by the buffer policy) to the others now.
  void syncParameters();

  /// Replica i (0 is the first, the table's child, whose parameters the optimizer updates).
  ModulePtr get(size_t index) const;
  /// Whether backward sums the replicas' gradients onto the first (true, the default). False
  /// accumulates each replica's on its own device, for all but the last of the micro-batches of
  /// one optimizer step (Note [Deferred reduce]; nn::NoSync in nn/parallel/NoSync.h sets it for a
  /// scope): the next backward with it true sums all of them.
  void setSync(bool sync) { sync_ = sync; }
  /// Whether backward sums the replicas' gradients (setSync).
  bool sync() const { return sync_; }
  /// How many rounds the device threads have run (each hands every device with work its task),
  /// for tests that count a step's rounds; 0 before add().
  int64_t deviceRounds() const;
  /// How many replicas (devices) the table has; 0 before add().
  size_t replicaCount() const { return replicas_.size(); }
  /// The devices given to add(), replica i on devices()[i].
  const std::vector<Device>& devices() const { return options_.devices; }
  /// The input dimension split across devices.
  int dim() const { return options_.dim; }
  /// True when replica i will be refreshed from the first before the next forward.
  bool isStale(size_t index) const;
  /// Sets what syncParameters does with the replicas' buffers.
  void setBufferPolicy(BufferPolicy policy) { options_.bufferPolicy = policy; }
  /// What syncParameters does with the replicas' buffers.
  BufferPolicy bufferPolicy() const { return options_.bufferPolicy; }
  /// The communicator in use ("host copies", "nccl", "peer copies").
  std::string communicatorName() const;

  /// Refreshes stale replicas, scatters the input (every tensor of a table input), runs each
  /// replica on its slice and gathers their outputs (tensor by tensor, where they are tables)
  /// on the first device (Note [Data parallel steps]).
  const Activity& updateOutputActivity(const Activity& input) override;
  /// Scatters gradOutput, unless this forward's gradOutput is scattered already (Note [One
  /// scatter per backward]), runs each replica's and gathers their gradInputs.
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  /// Runs each replica's on its slice of gradOutput (scattered by updateGradInput when it is
  /// the same gradOutput), then sums the replicas' gradients into the first's.
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;

  /// Also sets it on every replica; without gradInput, backward gathers none.
  void setGradInputNeeded(bool needed) override;
  /// Zeroes the first replica's gradients: the others' are counted (Note [Counted gradients]).
  /// On CPU devices the fill is cut over the device threads (LendDeviceThreads).
  void zeroGradParameters() override;
  /// Updates the first replica's parameters (cut over the device threads, as zeroGradParameters)
  /// and marks the others stale.
  void updateParameters(float learningRate) override;
  /// The first replica's, marking the others stale (the caller may write through them).
  void collectParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients) override;
  /// The first replica's, marking the others stale.
  std::pair<Tensor, Tensor> getParameters() override;
  /// The first replica's, under its own names ("0.weight"), marking the others stale.
  std::vector<NamedTensor> stateDict() override;
  /// On every replica.
  void training() override;
  /// On every replica.
  void evaluate() override;
  /// Also releases every replica's and the slices of the last step.
  void clearState() override;
  /// fn on this table, then on the first replica's tree; marks the others stale.
  void apply(const std::function<void(Module&)>& fn) override;
  /// Per step, each device thread's work and wait in each part of the step, and the caller's time
  /// in the table outside the device threads' rounds (Note [Device threads' profile]).
  std::string profileDetail(const PassTime& step) const override;
  void resetProfileDetail() override;
  /// Refuses any device but the first replica's: the replicas stay on the devices given to
  /// add(), so a parent's to() cannot leave them apart.
  void checkMovable(const Device& device) const override;

  std::string typeName() const override { return "nn.DataParallelTable"; }
  /// "nn.DataParallelTable(dim 0, cpu:0, cpu:1)", then the first replica as a child block.
  std::string toString() const override;

 private:
  friend class LendDeviceThreads;

  /// Marks a call of `what` on this table as running, for its lifetime; an nn::Error if one
  /// runs already on another thread (Note [One call at a time]). Calls nest on one thread. The
  /// outermost is timed as the table's calls unless `timed` is false.
  class OneCall {
   public:
    OneCall(DataParallelTable& table, const char* what, bool timed = true);
    ~OneCall();
    OneCall(const OneCall&) = delete;
    OneCall& operator=(const OneCall&) = delete;

   private:
    // The error for a call of `what` while another runs.
    static std::string refusal(const char* what);

    DataParallelTable& table_;
    std::optional<ScopedTimer> timer_;  // the outermost call's time, where profiling is on
  };

  void checkReady() const;
  void checkGradOutput(const Activity& gradOutput) const;
  /// "nn.DataParallelTable(dim 0, cpu:0, cpu:1)": the first line of toString(), for messages.
  std::string header() const;
  /// The parts of a step that run on the device threads, as the profile names them; kUntimed
  /// for rounds outside training steps (threads()).
  enum Part : size_t {
    kBroadcast,
    kForward,
    kGradInput,
    kGradParameters,
    kBackward,
    kReduce,
    kParts,
    kUntimed = kParts
  };
  /// DeviceThreads::run for `part` of the step, with failures named as this table's.
  void runReplicas(Part part, size_t count, FunctionRef<void(size_t)> task);
  /// DeviceThreads::run, timed as `part` where profiling is on (Note [Device threads' profile]).
  void runTimed(Part part, size_t count, FunctionRef<void(size_t)> task);
  /// Runs part(p) for p < parts on the device threads, between the table's calls or inside one
  /// outside its rounds: a kernel's parts on threads lent by LendDeviceThreads.
  void runLentParts(int parts, FunctionRef<void(int)> part);
  /// Scatters device i's slice of the plan's source into `into`, on device i's thread.
  const Activity& scatterTo(size_t i, Activity& into);
  /// Scatters every slice of the plan's source into `into` by the communicator, on the caller's
  /// thread, where the source allows it; false where each device's thread must copy its own
  /// (Note [Scatter by the communicator]).
  bool scatterWhole(std::vector<Activity>& into);
  /// Gathers the replicas' `part` (outputActivity or gradInputActivity) of this step into `into`.
  void gather(const Activity& (Module::*part)() const, Activity& into);
  /// The gradInput of the replicas' updateGradInput just run: gathered, or empty where the
  /// replicas made none (setGradInputNeeded(false)).
  const Activity& gatherGradInput();
  /// Both passes of backward in one round of the devices: each replica's updateGradInput and
  /// then its accGradParameters, as the two calls one by one do in two (Note [One round per backward]).
  const Activity& backwardPassesActivity(const Activity& input, const Activity& gradOutput, float scale) override;
  /// One round of every replica's accGradParameters (after its updateGradInput where
  /// `gradInputToo`, then gathered), as `part` of the step, then the gradients' reduce.
  void gradientRound(Part part, const Activity& input, const Activity& gradOutput, float scale, bool gradInputToo);
  /// Scatters `input` into the plan's input slices unless they hold it already: backward given
  /// another input than the last forward's (a table in two places of a tree) works on that
  /// input's rows, as a plain module would (Note [A table in two places]); the scatter's round
  /// is timed as `part` of the step.
  void scatterInputIfNew(Part part, const Activity& input);
  /// Scatters gradOutput into the plan's slices unless they hold it already; runs `then(i)`
  /// on device i's thread after its slice is there, for every replica (those without rows
  /// too, when `everyReplica`).
  void withGradOutputSlices(Part part, const Activity& gradOutput, bool everyReplica, FunctionRef<void(size_t)> then);
  /// Runs replica i's part of a forward or backward on its device thread with the replicas'
  /// StatisticsGroup (synchronised batch normalisation sums through it); where it fails, the
  /// other replicas' waits in that group end with an error that names it.
  void replicaPass(size_t i, FunctionRef<void()> pass);
  void markStale();
  static void mirrorModes(const Module& from, Module& to);

  // Which activity a set of slices was scattered from, as it was when they were copied: the
  // handle, storage and offset of each of its tensors (Note [One scatter per backward]).
  struct Scattered {
    /// False until remember(), and after forget().
    bool valid = false;
    std::vector<Tensor> tensors;
    std::vector<std::shared_ptr<Storage>> storages;
    std::vector<int64_t> offsets;

    /// True when the slices were scattered from this very activity; `scratch` holds its tensors.
    bool holds(const Activity& a, std::vector<Tensor>& scratch) const;
    /// Remembers `a` as the activity the slices hold.
    void remember(const Activity& a);
    void forget();
  };

  // What the steps of one training step work in (Note [Step plan]): kept from step to step,
  // so that a steady step allocates nothing.
  struct StepPlan {
    /// The split of the last forward's batch: one slice per device that got rows.
    std::vector<Slice> slices;
    /// Per device: its slice of the input and of gradOutput.
    std::vector<Activity> inputs, gradOutputs;
    /// The input or gradOutput with every tensor contiguous, for the scatter.
    Activity source;
    /// Scratch for the slices handed to the communicator's scatter.
    std::vector<Tensor> scatterParts;
    /// The input and the gradOutput whose slices inputs and gradOutputs hold.
    Scattered input, gradOutput;
    /// Scratch for the tensors of an input or a gradOutput, to compare them with those above.
    std::vector<Tensor> scratchTensors;
    /// The replicas' outputs or gradInputs, for the gather.
    std::vector<const Activity*> parts;
    ActivityGather gatherActivities;
    /// The replicas' tensors, for the collectives.
    ReplicaTensors collectives;

    /// The number of devices with rows in this step (0 before a forward).
    size_t active() const { return slices.size(); }
  };

  // The thread of the call running on this table, and how deeply it nests (Note [One call at a time]).
  std::atomic<std::thread::id> caller_{};
  int callDepth_ = 0;

  // Note [Device threads' profile]: the rounds of each part as the caller saw them, each
  // device's tasks in them (tasks[part][i], written by device i's thread alone) and its scatters,
  // and the caller's time in the table's calls.
  struct ProfileTimes {
    PassTime rounds[kParts];
    std::vector<PassTime> tasks[kParts];
    std::vector<PassTime> starts;  // each device thread's time from a round's hand-out to its task
    std::vector<PassTime> scatters;
    PassTime wholeScatters;  // by the communicator, on the caller's thread
    PassTime calls;
  };
  ProfileTimes profileTimes_;
  Part collectivePart_ = kReduce;  // what the communicator's rounds are part of

  std::vector<ModulePtr> replicas_;  // modules_ (the table's children) holds the first alone
  std::vector<bool> stale_;
  bool sync_ = true;
  // The replicas other than the first hold gradients not yet summed (Note [Deferred reduce]).
  bool uncounted_ = false;
  bool buffersChanged_ = false;
  std::unique_ptr<DeviceThreads> threads_;
  std::unique_ptr<ReplicaStatistics> statistics_;
  std::unique_ptr<Communicator> communicator_;
  StepPlan plan_;
};

}  // namespace nn

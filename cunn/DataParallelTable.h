// nn::DataParallelTable: trains one module on several devices at once (Torch7's cunn
// DataParallelTable). See the note at the top of DataParallelTable.cpp for the design.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "cunn/DeviceThreads.h"
#include "nn/Container.h"
#include "nn/backend/Communicator.h"

namespace nn {

class DataParallelTable : public Container {
 public:
  /// What happens to buffers (BatchNorm running statistics) of the replicas.
  enum class BufferPolicy {
    /// The first replica's buffers are copied to the others with its parameters (default).
    BroadcastFirst,
    /// The replicas' buffers are averaged into the first, then copied to all.
    Average,
  };

  /// dim: the input dimension split across devices (0-based). flattenParams: keep each
  /// replica's parameters and gradients in one buffer each, so that a reduction or a
  /// broadcast is one call per buffer. useNCCL: NCCL where it can run (CUDA devices), else
  /// copies, said once on stderr.
  explicit DataParallelTable(int dim, bool flattenParams = true, bool useNCCL = true);
  ~DataParallelTable() override;
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Replicates `module` onto each device: the first replica is `module` itself, moved to
  /// devices[0], and the table's only child; the others are deep copies. Starts one thread per
  /// device. (Container::add, without devices, is hidden: a table's module comes with them.)
  DataParallelTable& add(ModulePtr module, const std::vector<Device>& devices);
  /// Runs init once on each device's thread, now (Torch7's threads()).
  DataParallelTable& threads(const std::function<void(const Device&)>& init);
  /// Copies the first replica's parameters (and buffers, by the buffer policy) to the others now.
  void syncParameters();

  /// Replica i (0 is the first, the table's child, whose parameters the optimizer updates).
  ModulePtr get(size_t index) const;
  size_t replicaCount() const { return replicas_.size(); }
  const std::vector<Device>& devices() const { return devices_; }
  int dim() const { return dim_; }
  /// True when replica i will be refreshed from the first before the next forward.
  bool isStale(size_t index) const;
  void setBufferPolicy(BufferPolicy policy) { bufferPolicy_ = policy; }
  BufferPolicy bufferPolicy() const { return bufferPolicy_; }
  /// The communicator in use ("host copies", "nccl", "peer copies").
  std::string communicatorName() const;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  /// Also sets it on every replica; without gradInput, backward gathers none.
  void setGradInputNeeded(bool needed) override;
  void zeroGradParameters() override;
  void updateParameters(float learningRate) override;
  void collectParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients) override;
  std::pair<Tensor, Tensor> getParameters() override;
  std::vector<NamedTensor> stateDict() override;
  void training() override;
  void evaluate() override;
  void clearState() override;
  void apply(const std::function<void(Module&)>& fn) override;
  /// Refuses any device but the first replica's: the replicas stay on the devices given to
  /// add(), so a parent's to() cannot leave them apart.
  void checkMovable(const Device& device) const override;

  std::string typeName() const override { return "nn.DataParallelTable"; }
  std::string toString() const override;
  Config config() const override;

 private:
  void checkReady() const;
  void checkGradOutput(const Tensor& gradOutput) const;
  /// "nn.DataParallelTable(dim 0, cpu:0, cpu:1)": the first line of toString(), for messages.
  std::string header() const;
  /// DeviceThreads::run, with failures named as this table's.
  void runReplicas(size_t count, FunctionRef<void(size_t)> task);
  void markStale();
  size_t activeDevices(int64_t batch) const;
  void split(int64_t batch, size_t active);
  void gather(const std::vector<const Tensor*>& parts, Tensor& into, size_t active);
  void reduceGradients();
  void averageBuffers();
  static void mirrorModes(const Module& from, Module& to);

  // What the collectives work on, per replica; the vectors keep their capacity between
  // steps, so a training step allocates nothing.
  struct ReplicaTensors {
    Tensor flatValues, flatGradients;  // from getParameters() at add(), if flattenParams
    bool flat = false;                 // the parameters are still views into them
    std::vector<Tensor> values, gradients, buffers;
  };
  enum class Kind { Values, Gradients, Buffers };
  void refreshTensors(size_t count);
  /// Calls collective(group) with one tensor of each of the first `count` replicas: their
  /// flat buffers (one call), or each parameter or buffer in turn.
  template <typename Collective>
  void forEachGroup(Kind kind, size_t count, Collective collective);

  int dim_;
  bool flattenParams_;
  bool useNCCL_;
  BufferPolicy bufferPolicy_ = BufferPolicy::BroadcastFirst;
  std::vector<Device> devices_;
  std::vector<ModulePtr> replicas_;  // modules_ (the table's children) holds the first alone
  std::vector<bool> stale_;
  bool buffersChanged_ = false;
  std::unique_ptr<DeviceThreads> threads_;
  std::unique_ptr<Communicator> communicator_;

  // Per device: its slice of the input and of gradOutput, and where the slice starts.
  std::vector<Tensor> inputs_;
  std::vector<Tensor> gradOutputs_;
  std::vector<int64_t> sliceStart_;
  std::vector<int64_t> sliceLength_;
  std::vector<std::vector<int64_t>> sliceSizes_;
  std::vector<const Tensor*> parts_;
  std::vector<int64_t> sizes_;
  std::vector<ReplicaTensors> tensors_;
  std::vector<Tensor> group_;
  size_t active_ = 0;
};

}  // namespace nn

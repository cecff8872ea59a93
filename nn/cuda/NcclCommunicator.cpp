// NcclCommunicator: reduce, broadcast and all-reduce with NCCL, rank 0 the root; scatter by
// point-to-point sends from it.
#include "nn/cuda/NcclCommunicator.h"

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>

#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"

namespace nn {

namespace {

using CommSet = std::vector<ncclComm*>;

// The sets that destroyed communicators gave back, by their devices' indices in rank order.
// Never destroyed, as CudaBackend is not: the sets live as long as the process.
struct Pool {
  std::mutex mutex;
  std::map<std::vector<int>, std::vector<CommSet>> free;
};
Pool& pool() {
  static Pool* instance = new Pool();
  return *instance;
}
std::atomic<int64_t> gSetsMade{0};

void destroy(const CommSet& comms) {
  for (ncclComm* comm : comms) {
    if (comm == nullptr) continue;
    const ncclResult_t status = ncclCommDestroy(comm);
    if (status != ncclSuccess)
      std::fprintf(stderr, "NcclCommunicator: ncclCommDestroy failed: %s\n", ncclGetErrorString(status));
  }
}

// ncclGroupStart .. ncclGroupEnd around the per-device calls of one collective, which NCCL
// then launches together (one thread drives every device). The group is ended on every path.
class NcclGroup {
 public:
  NcclGroup() { NCCL_CHECK(ncclGroupStart()); }
  ~NcclGroup() {
    // Only reached without end() while an earlier failure is being thrown: that failure is
    // the one to report, this call only leaves NCCL's group state balanced.
    if (!ended_) ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  void end() {
    ended_ = true;
    NCCL_CHECK(ncclGroupEnd());
  }

 private:
  bool ended_ = false;
};

}  // namespace

NcclCommunicator::NcclCommunicator(std::vector<Device> devices) : devices_(std::move(devices)) {
  checkCudaDevices(devices_, "NcclCommunicator");
  std::vector<int> indices;
  for (const Device& d : devices_) indices.push_back(d.index());
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    const auto it = pool().free.find(indices);
    if (it != pool().free.end() && !it->second.empty()) {
      comms_ = std::move(it->second.back());
      it->second.pop_back();
      return;
    }
  }
  CommSet comms(devices_.size(), nullptr);
  NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), indices.data()));
  comms_ = std::move(comms);
  ++gSetsMade;
}

NcclCommunicator::~NcclCommunicator() {
  if (broken_) {
    destroy(comms_);
    return;
  }
  std::vector<int> indices;
  for (const Device& d : devices_) indices.push_back(d.index());
  std::lock_guard<std::mutex> lock(pool().mutex);
  pool().free[indices].push_back(std::move(comms_));
}

int64_t NcclCommunicator::setsMade() { return gSetsMade.load(); }

void NcclCommunicator::reduce(const std::vector<Tensor>& tensors) {
  run(Collective::Reduce, tensors, "NcclCommunicator.reduce");
}

void NcclCommunicator::broadcast(const std::vector<Tensor>& tensors) {
  run(Collective::Broadcast, tensors, "NcclCommunicator.broadcast");
}

void NcclCommunicator::allReduce(const std::vector<Tensor>& tensors) {
  run(Collective::AllReduce, tensors, "NcclCommunicator.allReduce");
}

void NcclCommunicator::scatter(const Tensor& source, const std::vector<Tensor>& parts) {
  checkScatterTensors(source, parts, devices_, "NcclCommunicator.scatter");
  CudaBackend& backend = CudaBackend::instance();
  const float* from = source.rawData();
  const int root = devices_[0].index();
  if (parts[0].numel() > 0) {
    DeviceGuard guard(root);
    CUDA_CHECK(cudaMemcpyAsync(parts[0].rawData(), from, static_cast<size_t>(parts[0].numel()) * sizeof(float),
                               cudaMemcpyDeviceToDevice, backend.stream(root)));
  }
  from += parts[0].numel();
  // Cleared at the end: a throw on the way leaves the set marked, and it is destroyed, not pooled.
  broken_ = true;
  {
    NcclGroup group;
    for (size_t r = 1; r < parts.size(); ++r) {
      const size_t n = static_cast<size_t>(parts[r].numel());
      if (n == 0) continue;  // both sides skip it: a rank without rows
      NCCL_CHECK(ncclSend(from, n, ncclFloat, static_cast<int>(r), comms_[0], backend.stream(root)));
      NCCL_CHECK(ncclRecv(parts[r].rawData(), n, ncclFloat, 0, comms_[r], backend.stream(devices_[r].index())));
      from += n;
    }
    group.end();
  }
  broken_ = false;
}

void NcclCommunicator::run(Collective collective, const std::vector<Tensor>& tensors, const char* who) {
  checkCollectiveTensors(tensors, devices_, who);
  const size_t count = static_cast<size_t>(tensors[0].numel());
  if (count == 0) return;
  CudaBackend& backend = CudaBackend::instance();
  // Cleared at the end: a throw on the way leaves the set marked, and it is destroyed, not pooled.
  broken_ = true;
  {
    NcclGroup group;
    for (size_t i = 0; i < devices_.size(); ++i) {
      // In place on every rank; a reduce writes only the root's tensor.
      float* data = tensors[i].rawData();
      cudaStream_t stream = backend.stream(devices_[i].index());
      switch (collective) {
        case Collective::Reduce:
          NCCL_CHECK(ncclReduce(data, data, count, ncclFloat, ncclSum, 0, comms_[i], stream));
          break;
        case Collective::Broadcast:
          NCCL_CHECK(ncclBroadcast(data, data, count, ncclFloat, 0, comms_[i], stream));
          break;
        case Collective::AllReduce:
          NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comms_[i], stream));
          break;
      }
    }
    group.end();
  }
  broken_ = false;
  // No host wait: each rank's part is queued on its device's stream, behind the work that
  // produced its tensor and ahead of the work that uses the result (Note [One stream per
  // device]).
}

}  // namespace nn

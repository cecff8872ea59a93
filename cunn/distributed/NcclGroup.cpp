// nn::NcclGroup on NCCL: one communicator per process on its device, bootstrapped over MPI.
#include "cunn/distributed/NcclGroup.h"

#include <cstdio>

#include "cunn/cuda/Check.h"
#include "cunn/cuda/CudaBackend.h"
#include "cunn/cuda/DeviceGuard.h"

namespace nn {

namespace {

class NcclProcessGroup : public NcclGroup {
 public:
  NcclProcessGroup(Device device, int rank, int size, FunctionRef<void(void*, size_t)> shareFromRank0)
      : device_(device) {
    checkCudaDevices({device_}, "nn.ProcessGroup (NCCL)");
    ncclUniqueId id{};
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    shareFromRank0(&id, sizeof id);
    DeviceGuard guard(device_);
    NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank));
  }
  ~NcclProcessGroup() override {
    const ncclResult_t status = ncclCommDestroy(comm_);
    if (status != ncclSuccess)
      std::fprintf(stderr, "nn.ProcessGroup: ncclCommDestroy failed: %s\n", ncclGetErrorString(status));
  }

  void allReduceSum(Tensor& t) override {
    if (t.numel() == 0) return;
    float* data = t.rawData();
    NCCL_CHECK(ncclAllReduce(data, data, static_cast<size_t>(t.numel()), ncclFloat, ncclSum, comm_, stream()));
  }
  void broadcast(Tensor& t, int root) override {
    if (t.numel() == 0) return;
    float* data = t.rawData();
    NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(t.numel()), ncclFloat, root, comm_, stream()));
  }

 private:
  cudaStream_t stream() { return CudaBackend::instance().stream(device_.index()); }

  Device device_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<NcclGroup> makeNcclGroup(Device device, int rank, int size,
                                         FunctionRef<void(void* bytes, size_t n)> shareFromRank0) {
  return std::make_unique<NcclProcessGroup>(device, rank, size, shareFromRank0);
}

}  // namespace nn

// nn::NcclGroup on NCCL: one communicator per process on its device, bootstrapped over MPI,
// non-blocking (NCCL's config.blocking = 0) so that no NCCL call, nor a host wait for the work
// it queued, waits past the group's timeout: the set-up and each collective's queuing are polled
// against it, and the collectives' completion is watched by a CollectiveDeadline while the host
// waits for the device (cuda::WaitWatch). Past the timeout, or on NCCL's asynchronous error, the
// communicator is aborted (ncclCommAbort) and the job ended as the MPI path ends it.
#include "nn/distributed/NcclGroup.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/HostWait.h"
#include "nn/distributed/CollectiveDeadline.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Queued collectives watched at once: each has an event recorded after it, reused in turn.
constexpr size_t kEvents = 256;

// A non-blocking communicator's calls may return ncclInProgress: not a failure.
void checkQueued(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclInProgress) checkNccl(status, call, file, line);
}
#define NCCL_CHECK_QUEUED(call) checkQueued((call), #call, __FILE__, __LINE__)

class NcclProcessGroup : public NcclGroup {
 public:
  NcclProcessGroup(Device device, int rank, int size, FunctionRef<void(void*, size_t)> shareFromRank0,
                   NcclDeadline deadline)
      : device_(device),
        rank_(rank),
        size_(size),
        limits_(std::move(deadline)),
        deadline_(rank, size,
                  {[this](int64_t token) { return completed(token); }, [this] { return asyncError(); },
                   [this](const std::string& message) { abortAndEnd(message); }}) {
    checkCudaDevices({device_}, "nn.ProcessGroup (NCCL)");
    ncclUniqueId id{};
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    shareFromRank0(&id, sizeof id);
    DeviceGuard guard(device_);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    NCCL_CHECK_QUEUED(ncclCommInitRankConfig(&comm_, size, id, rank, &config));
    settle("setting up the communicator");
    events_.reserve(kEvents);
    watch_ = std::make_unique<cuda::WaitWatch>([this] {
      std::lock_guard<std::mutex> lock(mutex_);
      deadline_.poll(limits_.timeoutSeconds());
    });
  }

  ~NcclProcessGroup() override {
    watch_.reset();
    if (comm_ == nullptr) return;  // aborted
    // Finalising flushes the queued collectives; one that cannot complete is not waited for past
    // the timeout (an abort ends the communicator without it).
    ncclResult_t status = ncclCommFinalize(comm_);
    const auto deadline = Clock::now() + std::chrono::duration<double>(limits_.timeoutSeconds());
    while (status == ncclInProgress && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      ncclCommGetAsyncError(comm_, &status);
    }
    status = status == ncclSuccess ? ncclCommDestroy(comm_) : ncclCommAbort(comm_);
    if (status != ncclSuccess)
      std::fprintf(stderr, "nn.ProcessGroup: ending the NCCL communicator failed: %s\n", ncclGetErrorString(status));
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }

  void allReduceSum(Tensor& t) override {
    if (t.numel() == 0) return;
    float* data = t.rawData();
    DeviceGuard guard(device_);
    NCCL_CHECK_QUEUED(ncclAllReduce(data, data, static_cast<size_t>(t.numel()), ncclFloat, ncclSum, comm_, stream()));
    queued("allReduceSum", t);
  }
  void broadcast(Tensor& t, int root) override {
    if (t.numel() == 0) return;
    float* data = t.rawData();
    DeviceGuard guard(device_);
    NCCL_CHECK_QUEUED(ncclBroadcast(data, data, static_cast<size_t>(t.numel()), ncclFloat, root, comm_, stream()));
    queued("broadcast", t);
  }

 private:
  using Clock = std::chrono::steady_clock;

  cudaStream_t stream() { return CudaBackend::instance().stream(device_.index()); }

  // Polls the communicator until the call just made has settled (no longer ncclInProgress):
  // throws its error, and ends the job where it does not settle within the timeout.
  void settle(const char* what) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(limits_.timeoutSeconds());
    for (int polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm_, &state));
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) checkNccl(state, what, __FILE__, __LINE__);
      if (polls % 1024 == 0 && Clock::now() > deadline)
        abortAndEnd("nn.ProcessGroup: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": NCCL " +
                    what + " did not complete within " + std::to_string(limits_.timeoutSeconds()) +
                    " s; another rank stopped. Ending the job.");
      if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // Waits until the collective is queued, records an event after it and notes it for the
  // deadline; the event is the one noted kEvents collectives ago, which must have completed.
  void queued(const char* name, const Tensor& t) {
    settle(name);
    std::lock_guard<std::mutex> lock(mutex_);
    while (deadline_.pending() >= kEvents) {
      deadline_.poll(limits_.timeoutSeconds());
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (events_.size() < kEvents) {
      cudaEvent_t event = nullptr;
      CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      events_.push_back(event);
    }
    const int64_t token = queuedCount_++;
    CUDA_CHECK(cudaEventRecord(events_[static_cast<size_t>(token) % kEvents], stream()));
    deadline_.queued(name, t, token);
  }

  bool completed(int64_t token) {
    const cudaError_t status = cudaEventQuery(events_[static_cast<size_t>(token) % kEvents]);
    if (status == cudaErrorNotReady) {
      cudaGetLastError();  // not a failure: still running
      return false;
    }
    CUDA_CHECK(status);
    return true;
  }

  std::string asyncError() {
    ncclResult_t state = ncclSuccess;
    if (comm_ == nullptr || ncclCommGetAsyncError(comm_, &state) != ncclSuccess) return "";
    if (state == ncclSuccess || state == ncclInProgress) return "";
    return std::string(ncclGetErrorString(state)) + " (" + ncclGetLastError(comm_) + ")";
  }

  [[noreturn]] void abortAndEnd(const std::string& message) {
    if (comm_ != nullptr) ncclCommAbort(comm_);
    comm_ = nullptr;
    limits_.endJob(message);
    throw Error(message);  // for an endJob that returns (a test's)
  }

  Device device_;
  int rank_, size_;
  NcclDeadline limits_;
  ncclComm_t comm_ = nullptr;
  // Guards deadline_ and events_ between the thread that queues collectives and the threads
  // whose waits run the watch.
  std::mutex mutex_;
  CollectiveDeadline deadline_;
  std::vector<cudaEvent_t> events_;
  int64_t queuedCount_ = 0;
  std::unique_ptr<cuda::WaitWatch> watch_;
};

}  // namespace

std::unique_ptr<NcclGroup> makeNcclGroup(Device device, int rank, int size,
                                         FunctionRef<void(void* bytes, size_t n)> shareFromRank0,
                                         NcclDeadline deadline) {
  return std::make_unique<NcclProcessGroup>(device, rank, size, shareFromRank0, std::move(deadline));
}

}  // namespace nn

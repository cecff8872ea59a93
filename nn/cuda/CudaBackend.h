// CudaBackend: the backend of the cuda:N devices (nn/backend/Backend.h): device count, memory
// (a caching allocator per device), copies between any two devices, the NCCL and peer-copy
// communicators, and the kernel tables of this folder (nn/cuda/Tables.h). Linking
// //nn/cuda installs it in nn (Note [Backends]), so nn reaches CUDA without a CUDA header.
// What the three notes below buy, and what was weighed against them: docs/cuda-backend.md.
//
// Note [One stream per device]
// Every operation on a device (kernels, copies, NCCL calls) is queued on that device's one
// stream (stream()), so it runs after the operations issued before it there, and memory freed
// by one operation's tensor is safe to hand to the next (CudaAllocator). The host waits only
// where memory leaves the devices (Note [Staged host copies]); between two devices the order
// is kept by events (streamWait, Note [Peer copies]).
//
// Note [Peer copies]
// A copy between two devices with peer access runs on the copy stream of that pair
// (pairStream), behind events of both devices' streams, and both streams wait for its `done`
// event: copies from one device to several, or from several to one, run at once, and a block
// freed after a copy is handed out again only behind it. Without peer access, copyThroughHost.
//
// Note [Staged host copies]
// A copy between the host and a device goes through the device's kStagingSlots pinned slots,
// a chunk at a time: from the host it waits only for a slot still read by an earlier copy
// (stagingRead); to the host it queues a chunk into every slot, waits once, copies them out,
// and so on until done. makeStaging grows the slots to the largest copy from the host so far,
// a power of two from kStagingSlotMinBytes to kStagingSlotMaxBytes. Every wait goes through
// nn/cuda/HostWait.h, which counts it; synchronize() also throws a failed value check
// (nn/cuda/ValueChecks.h).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/cuda/CudaAllocator.h"
#include "nn/cuda/ValueChecks.h"

namespace nn {

class CudaBackend : public Backend {
 public:
  /// The process's backend, the one installed in nn. It is never destroyed: tensors
  /// destroyed at exit still return their memory to it.
  static CudaBackend& instance();

  /// cudaGetDeviceCount, asked once; 0 when the runtime cannot be used.
  int deviceCount() override;
  /// The runtime's message when deviceCount() is 0; empty otherwise.
  std::string unavailableReason() override;
  /// cudaSetDevice.
  void makeCurrent(const Device& device) override;
  void* allocate(const Device& device, size_t bytes) override;
  void deallocate(const Device& device, void* ptr) noexcept override;
  bool isHost() const override { return false; }
  /// Host to device, device to host and device to device (directly where the two devices
  /// have peer access, else through pinned host memory); strided within one device only. See
  /// Note [One stream per device] and, for the host's side, Note [Staged host copies].
  void copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src, const Device& srcDevice,
            const StridedView& srcView, int64_t count) override;
  bool copiesStrided(const Device& dstDevice, const Device& srcDevice) const override { return dstDevice == srcDevice; }
  /// Copies `bytes` between two devices, one of them CUDA, both sides contiguous (copy()'s
  /// routes: staged through pinned memory from and to the host, peer copies between devices).
  void copyBytes(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice, size_t bytes) override;
  /// NCCL where asked for and it starts, else peer copies (saying once why not NCCL).
  std::unique_ptr<Communicator> communicator(const std::vector<Device>& devices, bool useNCCL,
                                             ParallelFor parallel) override;
  /// Queues a kernel that checks the values where they are; a failure is thrown by the next
  /// synchronize() of the device (Note [Host synchronisations]).
  void checkValues(const Device& device, const float* values, int64_t n, const ValueCheck& check,
                   FunctionRef<std::string()> who, const std::vector<int64_t>& sizes) override;
  /// cuda::hostWaitCount(): the waits of every CUDA device.
  int64_t hostSynchronizations() const override;

  /// The stream of cuda:`device` (created on first use).
  cudaStream_t stream(int device);
  /// The cuBLAS handle of cuda:`device` (created on first use), queuing on stream(device)
  /// in full float32 (no TF32 or other reduced-precision paths). Used by that device's
  /// thread only: cuBLAS handles are not for two threads at once.
  cublasHandle_t blas(int device);
  /// The cuDNN handle of cuda:`device` (created on first use), queuing on stream(device).
  /// Used by that device's thread only, as blas(). The math mode is set per convolution
  /// descriptor (nn/cuda/ConvolutionKernels.cpp), not here.
  cudnnHandle_t cudnn(int device);
  /// Waits until the work queued on cuda:`device`'s stream has finished (a counted wait), then
  /// throws the error of the first value check that failed there since the last such wait.
  void synchronize(int device);
  /// Makes cuda:`waiter`'s stream wait, without the host waiting, until the work queued so far
  /// on cuda:`device`'s stream has finished (an event recorded there).
  void streamWait(int waiter, int device);
  /// The caching allocator of cuda:`device`.
  CudaAllocator& allocator(int device);
  /// True when cuda:`a` and cuda:`b` read each other's memory directly; peer access is
  /// enabled on first asking, in both directions.
  bool peerAccess(int a, int b);
  /// The copy between two devices without peer access: through pinned host memory, a chunk
  /// at a time. copy() uses it where peerAccess() is false; public so that it can be tested
  /// on machines whose devices do have peer access.
  void copyThroughHost(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes);
  /// The value-check record of cuda:`device` (made on first use), for the kernels that index
  /// with checked values: they do nothing where cuda::checkFailed(record).
  cuda::CheckRecord* checkRecord(int device);

 private:
  // Copies between the host and a device go through this many pinned slots, each of a power of
  // two between these sizes (Note [Staged host copies]).
  static constexpr size_t kStagingSlots = 4;
  static constexpr size_t kStagingSlotMinBytes = size_t{2} << 20;
  static constexpr size_t kStagingSlotMaxBytes = size_t{64} << 20;
  // The value checks whose descriptions are kept until the next wait; the description of a
  // failed check queued before more than this many others is lost (the error says so).
  static constexpr size_t kPendingChecks = 64;

  // A queued value check, described for its error message.
  struct PendingCheck {
    unsigned int launch = 0;
    ValueCheck check{};
    std::string who;
    std::vector<int64_t> sizes;
  };

  struct PerDevice {
    explicit PerDevice(int device) : allocator(device) {}
    CudaAllocator allocator;
    std::once_flag streamOnce;
    cudaStream_t stream = nullptr;
    // Recorded on the stream by streamWait, under eventMutex until the wait on it is queued
    // (after which it may be recorded again: a queued wait keeps the state it saw).
    cudaEvent_t event = nullptr;
    std::mutex eventMutex;
    std::once_flag blasOnce;
    cublasHandle_t blas = nullptr;
    std::once_flag cudnnOnce;
    cudnnHandle_t cudnn = nullptr;
    // The staging slots (pinned, made on first use, of stagingSlotBytes each) and, for each, an
    // event recorded after the last copy that reads it; under stagingMutex.
    std::mutex stagingMutex;
    std::array<char*, kStagingSlots> staging{};
    std::array<cudaEvent_t, kStagingSlots> stagingRead{};
    size_t stagingSlotBytes = 0;
    size_t nextSlot = 0;
    // The value checks: the record in device memory, its copy as the last wait read it (pinned),
    // the launches numbered from 1 and described in a ring, and whether one was queued since
    // the last wait; under checkMutex.
    std::once_flag checkOnce;
    std::mutex checkMutex;
    cuda::CheckRecord* checkRecord = nullptr;
    cuda::CheckRecord* checkRead = nullptr;
    unsigned int checkLaunches = 0;
    bool checkQueued = false;
    std::array<PendingCheck, kPendingChecks> pendingChecks;
  };

  CudaBackend();
  /// Counts the devices once and makes their PerDevice entries.
  void initialise();
  /// Throws unless `device` is cuda:N with N < deviceCount().
  PerDevice& perDevice(int device);
  /// Host to cuda:`device` and back, through the device's staging slots.
  void copyFromHost(void* dst, int device, const void* src, size_t bytes);
  void copyToHost(void* dst, int device, const void* src, size_t bytes);
  /// The staging slots of `d`, made on first use and grown to hold a copy of `bytes` (up to
  /// kStagingSlotMaxBytes); under d.stagingMutex. A failure leaves the slots as they were.
  void makeStaging(PerDevice& d, int device, size_t bytes);
  /// Waits, where it is still running, for the last copy that reads slot `i` of `d`.
  static void waitUntilRead(PerDevice& d, size_t i);
  /// Queues the reset of cuda:`device`'s check record on its stream.
  void resetCheckRecord(PerDevice& d, cudaStream_t stream);
  /// The error of the failed check that `d.checkRead` holds; under d.checkMutex.
  std::string failedCheckMessage(const PerDevice& d, int device) const;

  std::once_flag initialised_;
  int count_ = 0;
  std::string reason_;
  std::vector<std::unique_ptr<PerDevice>> devices_;

  std::mutex peerMutex_;
  std::map<std::pair<int, int>, bool> peer_;

  // The copy stream of a pair of devices (Note [Peer copies]), on the lower-numbered one, and
  // an event recorded after each copy; a copy holds `mutex` from its first wait to the last
  // wait on `done` (a queued wait keeps the state it saw, so the event may be recorded again).
  struct PairStream {
    std::mutex mutex;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
  };
  /// The copy stream of cuda:`a` and cuda:`b` (a != b), made on first use.
  PairStream& pairStream(int a, int b);
  /// Queues on `waiting` a wait for the work queued so far on cuda:`device`'s stream.
  void waitForDevice(cudaStream_t waiting, int device);
  std::mutex pairsMutex_;
  std::map<std::pair<int, int>, std::unique_ptr<PairStream>> pairs_;

  // Pinned host memory through which devices without peer access exchange data, a chunk at
  // a time; allocated on first need and kept.
  std::mutex stagingMutex_;
  void* staging_ = nullptr;
};

/// Throws an nn::Error naming `who` (e.g. "NcclCommunicator") unless `devices` are one or
/// more distinct CUDA devices that exist.
void checkCudaDevices(const std::vector<Device>& devices, const char* who);

}  // namespace nn

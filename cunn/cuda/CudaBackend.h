// CudaBackend: the backend of the cuda:N devices (nn/backend/Backend.h): device count, memory
// (a caching allocator per device), copies between any two devices, the NCCL and peer-copy
// communicators, and the kernel tables of this folder (cunn/cuda/Tables.h). Linking
// //cunn/cuda installs it in nn (Note [Backends]), so nn reaches CUDA without a CUDA header.
//
// Note [One stream per device]
// Every operation on a device (kernels, copies, NCCL calls) is queued on that device's one
// stream, so operations on a device run in the order they were issued, and memory freed by
// one operation's tensor is safe to hand to the next (CudaAllocator). Towards the host the
// backend is synchronous where memory leaves or enters the devices: a copy to or from host
// memory returns when the data has arrived. Everything else is only queued. Between two
// devices the order is kept by events, not by the host: a peer copy is queued on the source's
// stream behind an event of the destination's (so it waits for the work already queued on
// both), and the destination's stream waits for an event recorded after it (so everything
// queued there later sees the data). What can observe a result therefore comes later on the
// same stream, or behind such an event, or is a copy to the host.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cunn/cuda/CudaAllocator.h"
#include "nn/backend/Backend.h"

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
  /// Note [One stream per device].
  void copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src, const Device& srcDevice,
            const StridedView& srcView, int64_t count) override;
  bool copiesStrided(const Device& dstDevice, const Device& srcDevice) const override { return dstDevice == srcDevice; }
  /// NCCL where asked for and it starts, else peer copies (saying once why not NCCL).
  std::unique_ptr<Communicator> communicator(const std::vector<Device>& devices, bool useNCCL,
                                             ParallelFor parallel) override;

  /// The stream of cuda:`device` (created on first use).
  cudaStream_t stream(int device);
  /// The cuBLAS handle of cuda:`device` (created on first use), queuing on stream(device)
  /// in full float32 (no TF32 or other reduced-precision paths). Used by that device's
  /// thread only: cuBLAS handles are not for two threads at once.
  cublasHandle_t blas(int device);
  /// The cuDNN handle of cuda:`device` (created on first use), queuing on stream(device).
  /// Used by that device's thread only, as blas(). The math mode is set per convolution
  /// descriptor (cunn/cuda/ConvolutionKernels.cpp), not here.
  cudnnHandle_t cudnn(int device);
  /// Waits until the work queued on cuda:`device`'s stream has finished.
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

 private:
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
  };

  CudaBackend();
  /// Counts the devices once and makes their PerDevice entries.
  void initialise();
  /// Throws unless `device` is cuda:N with N < deviceCount().
  PerDevice& perDevice(int device);
  /// Copies `bytes` between two devices, one of them CUDA, both sides contiguous.
  void copyBytes(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice, size_t bytes);

  std::once_flag initialised_;
  int count_ = 0;
  std::string reason_;
  std::vector<std::unique_ptr<PerDevice>> devices_;

  std::mutex peerMutex_;
  std::map<std::pair<int, int>, bool> peer_;

  // Pinned host memory through which devices without peer access exchange data, a chunk at
  // a time; allocated on first need and kept.
  std::mutex stagingMutex_;
  void* staging_ = nullptr;
};

/// Throws an nn::Error naming `who` (e.g. "NcclCommunicator") unless `devices` are one or
/// more distinct CUDA devices that exist.
void checkCudaDevices(const std::vector<Device>& devices, const char* who);

}  // namespace nn

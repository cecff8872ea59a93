// CpuBackend: the backend of the logical CPU devices cpu:0 .. cpu:63 (nn/backend/Backend.h).
// Each is its own memory domain to the library, though all share the host's address space:
// memory from the C heap, copies by memcpy, collectives by HostCommunicator, and the kernel
// tables of this folder.
#pragma once

#include "nn/backend/Backend.h"

namespace nn {

class CpuBackend : public Backend {
 public:
  CpuBackend();

  int deviceCount() override { return kMaxCpuDevices; }
  std::string unavailableReason() override { return ""; }
  void makeCurrent(const Device&) override {}
  /// 64-byte aligned: AVX loads, and two devices' data never share a cache line; from 2 MB on,
  /// 2 MB aligned on huge pages where the system has them (Note [Huge pages], CpuBackend.cpp).
  void* allocate(const Device& device, size_t bytes) override;
  void deallocate(const Device& device, void* ptr) noexcept override;
  bool isHost() const override { return true; }
  void copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src, const Device& srcDevice,
            const StridedView& srcView, int64_t count) override;
  bool copiesStrided(const Device&, const Device&) const override { return true; }
  /// memmove: the logical devices share the host's memory.
  void copyBytes(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice, size_t bytes) override;
  /// The compute threads cut the work of each kernel; each part's GEMMs run on one OpenBLAS
  /// thread, so that the parts do not oversubscribe the cores.
  void setComputeThreads(int threads) override;
  /// HostCommunicator; NCCL, asked for, is said once on stderr not to run on CPU devices.
  std::unique_ptr<Communicator> communicator(const std::vector<Device>& devices, bool useNCCL,
                                             ParallelFor parallel) override;
};

}  // namespace nn

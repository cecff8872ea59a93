// CpuBackend: memory, copies and collectives of the logical CPU devices.
#include "nn/cpu/CpuBackend.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Blas.h"
#include "nn/cpu/CpuFeatures.h"
#include "nn/cpu/HostCommunicator.h"
#include "nn/cpu/Strided.h"
#include "nn/cpu/Tables.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Every table of this folder (Tables.h), one per family of NN_KERNEL_FAMILIES, in its order.
Kernels cpuKernels() {
  using namespace cpu;
  return Kernels{NN_KERNEL_FAMILIES(NN_BUILD_KERNEL_TABLE)};
}

}  // namespace

CpuBackend::CpuBackend() : Backend(DeviceType::CPU, cpuKernels()) {}

void CpuBackend::setComputeThreads(int) { blas::setNumThreads(1); }

Backend& cpuBackend() {
  // Never destroyed: tensors destroyed at exit still give their memory back to it.
  static CpuBackend* backend = new CpuBackend();
  return *backend;
}

std::string cpuInfo() {
  const blas::Report& blas = blas::report();
  const char* chooser = blas.chosenBy == blas::Chooser::features      ? "chosen by the CPU's features"
                        : blas.chosenBy == blas::Chooser::environment ? "chosen by OPENBLAS_CORETYPE"
                                                                      : "OpenBLAS's own choice";
  std::ostringstream s;
  const std::string features = cpu::featureNames(cpu::cpuFeatures());
  s << "CPU: " << cpu::cpuModelName() << (features.empty() ? "" : " with " + features)
    << "; kernels: " << cpu::isaName(cpu::isa()) << "; BLAS: " << blas.library << ", " << blas.kernels << " kernels ("
    << chooser << ")";
  return s.str();
}

std::string cpuMatmulPrecisionInfo() {
  const MatmulPrecision precision = float32MatmulPrecision();
  const std::string name = matmulPrecisionName(precision);
  if (precision != MatmulPrecision::medium) return name + ": float32 products";
  if (cpu::bf16GemmRuns()) return name + ": bfloat16 products (" + cpu::bf16GemmKernel() + ")";
  return name + ": float32 products (" + cpu::bf16GemmMissing() + ")";
}

// Note [Huge pages]
// Storage of 2 MB or more is 2 MB aligned, rounded up to whole 2 MB and marked for the kernel's
// transparent huge pages (madvise; most distributions leave them to the program's asking). A
// batch-normalisation pass reads a feature's rows a sample apart, a strided convolution reads
// every other row, a GEMM packs a weight's rows 4 KB apart: with 4 KB pages nearly every row is
// another page, another TLB miss (bench/README.md, "Measurements behind the code"). The rounding
// costs at most 2 MB a large tensor; where the kernel has no huge pages, madvise fails and
// changes nothing.
void* CpuBackend::allocate(const Device& device, size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t alignment = bytes >= kHuge ? kHuge : 64;
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* ptr = rounded >= bytes ? std::aligned_alloc(alignment, rounded) : nullptr;
  NN_CHECK(ptr != nullptr, "nn.Storage: out of memory allocating " << bytes << " bytes on " << device.str());
#ifdef MADV_HUGEPAGE
  if (alignment == kHuge) madvise(ptr, rounded, MADV_HUGEPAGE);
#endif
  return ptr;
}

void CpuBackend::deallocate(const Device&, void* ptr) noexcept { std::free(ptr); }

void CpuBackend::copyBytes(void* dst, const Device&, const void* src, const Device&, size_t bytes) {
  if (bytes != 0 && dst != src) std::memmove(dst, src, bytes);
}

void CpuBackend::copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src, const Device&,
                      const StridedView& srcView, int64_t count) {
  // The logical devices share the address space: a copy between them is a copy in memory.
  if (count == 0 || (dst == src && dstView.isContiguous() && srcView.isContiguous())) return;
  if (dstView.isContiguous() && srcView.isContiguous()) {
    if (dst + count <= src || src + count <= dst) {
      // Apart: on the destination's compute threads (CAddTable's gradInputs, Tensor::clone).
      parallelRanges(dstDevice, count, 65536, [&](int64_t begin, int64_t end) {
        std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin) * sizeof(float));
      });
      return;
    }
    std::memmove(dst, src, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  // nn::Tensor stages copies whose two sides overlap (Note [Overlapping copies] in
  // nn/tensor/Tensor.cpp); memmove keeps a view copied onto itself defined.
  if (srcView.isContiguous()) {
    cpu::forEachRun(dstView, count, [&](int64_t e, int64_t offset, int64_t length) {
      std::memmove(dst + offset, src + e, static_cast<size_t>(length) * sizeof(float));
    });
    return;
  }
  if (dstView.isContiguous()) {
    cpu::forEachRun(srcView, count, [&](int64_t e, int64_t offset, int64_t length) {
      std::memmove(dst + e, src + offset, static_cast<size_t>(length) * sizeof(float));
    });
    return;
  }
  // Rows of equal length a stride apart on both sides (copyAlong): a row at a time.
  const bool rows = dstView.dims == 2 && srcView.dims == 2 && dstView.sizes[0] == srcView.sizes[0] &&
                    dstView.sizes[1] == srcView.sizes[1] && dstView.strides[1] == 1 && srcView.strides[1] == 1;
  if (rows) {
    for (int64_t r = 0; r < dstView.sizes[0]; ++r)
      std::memmove(dst + r * dstView.strides[0], src + r * srcView.strides[0],
                   static_cast<size_t>(dstView.sizes[1]) * sizeof(float));
    return;
  }
  // Strided on both sides otherwise: through a contiguous copy of the source.
  std::vector<float> staged(static_cast<size_t>(count));
  copy(staged.data(), Device(), StridedView::contiguous(count), src, Device(), srcView, count);
  copy(dst, Device(), dstView, staged.data(), Device(), StridedView::contiguous(count), count);
}

// useNCCL asks for NCCL where it runs, on CUDA devices; CPU devices always sum and copy through
// the host, with the same contract, so the flag changes nothing here and is not remarked on.
std::unique_ptr<Communicator> CpuBackend::communicator(const std::vector<Device>& devices, bool, ParallelFor parallel) {
  return std::make_unique<HostCommunicator>(devices, std::move(parallel));
}

}  // namespace nn

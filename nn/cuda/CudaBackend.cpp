// CudaBackend: device count, memory, copies and communicators of the cuda:N devices, and the
// stream and library handles of each.
#include "nn/cuda/CudaBackend.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <vector>

#include "nn/cuda/Check.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/HostWait.h"
#include "nn/cuda/Kernels.h"
#include "nn/cuda/NcclCommunicator.h"
#include "nn/cuda/PeerCommunicator.h"
#include "nn/cuda/Tables.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Size of the pinned buffer that copies between devices without peer access go through.
constexpr size_t kStagingBytes = size_t{8} << 20;

// Installs the backend in nn when //nn/cuda is linked (alwayslink keeps this object file).
struct Installation {
  Installation() { installBackend(CudaBackend::instance()); }
} installation;

// Every table of this folder (Tables.h), one per family of NN_KERNEL_FAMILIES, in its order.
Kernels cudaKernels() {
  using namespace cuda;
  return Kernels{NN_KERNEL_FAMILIES(NN_BUILD_KERNEL_TABLE)};
}

void enablePeerAccess(int from, int to) {
  DeviceGuard guard(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // not a failure: another caller got here first
    return;
  }
  checkCuda(status, "cudaDeviceEnablePeerAccess(to, 0)", __FILE__, __LINE__);
}

}  // namespace

CudaBackend::CudaBackend() : Backend(DeviceType::CUDA, cudaKernels()) {}

CudaBackend& CudaBackend::instance() {
  static CudaBackend* backend = new CudaBackend();
  return *backend;
}

void CudaBackend::initialise() {
  std::call_once(initialised_, [this] {
    // Without a usable driver cudaGetDeviceCount fails (error 35, insufficient driver) and
    // leaves the count as it was: it must start at 0.
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();  // so that no later check reports this failure as its own
      count = 0;
      reason_ = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status) + " (" +
                cudaGetErrorName(status) + ")";
    } else if (count == 0) {
      reason_ = "the CUDA runtime found no device";
    }
    for (int i = 0; i < count; ++i) devices_.push_back(std::make_unique<PerDevice>(i));
    count_ = count;
  });
}

int CudaBackend::deviceCount() {
  initialise();
  return count_;
}

std::string CudaBackend::unavailableReason() {
  initialise();
  return reason_;
}

void CudaBackend::makeCurrent(const Device& device) {
  perDevice(device.index());
  CUDA_CHECK(cudaSetDevice(device.index()));
}

CudaBackend::PerDevice& CudaBackend::perDevice(int device) {
  initialise();
  NN_CHECK(count_ > 0, "CudaBackend: no CUDA device available for cuda:" << device << ": " << reason_);
  NN_CHECK(device >= 0 && device < count_,
           "CudaBackend: cuda:" << device << " does not exist: this machine has " << count_ << " CUDA device(s)");
  return *devices_[device];
}

// Note [Made whole or not at all]
// A stream, a library handle or a buffer that takes two or more calls to make is made into
// locals and published only when every call has succeeded; a failure releases what was made
// (unchecked: its own error is on its way) and leaves nothing half made for the next call, which
// tries again (std::call_once runs its function again after an exception).

cudaStream_t CudaBackend::stream(int device) {
  PerDevice& d = perDevice(device);
  std::call_once(d.streamOnce, [&] {
    DeviceGuard guard(device);
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
    try {
      // Non-blocking: the stream does not wait for work on the legacy default stream, which
      // this backend never uses.
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    } catch (...) {
      if (stream != nullptr) cudaStreamDestroy(stream);
      throw;
    }
    d.stream = stream;
    d.event = event;
  });
  return d.stream;
}

cublasHandle_t CudaBackend::blas(int device) {
  PerDevice& d = perDevice(device);
  cudaStream_t s = stream(device);
  std::call_once(d.blasOnce, [&] {
    DeviceGuard guard(device);
    cublasHandle_t handle = nullptr;
    try {
      CUBLAS_CHECK(cublasCreate(&handle));
      CUBLAS_CHECK(cublasSetStream(handle, s));
      // Results must not depend on the GPU generation: no TF32 tensor-core rounding.
      CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    } catch (...) {
      if (handle != nullptr) cublasDestroy(handle);
      throw;
    }
    d.blas = handle;
  });
  return d.blas;
}

cudnnHandle_t CudaBackend::cudnn(int device) {
  PerDevice& d = perDevice(device);
  cudaStream_t s = stream(device);
  std::call_once(d.cudnnOnce, [&] {
    DeviceGuard guard(device);
    cudnnHandle_t handle = nullptr;
    try {
      CUDNN_CHECK(cudnnCreate(&handle));
      CUDNN_CHECK(cudnnSetStream(handle, s));
    } catch (...) {
      if (handle != nullptr) cudnnDestroy(handle);
      throw;
    }
    d.cudnn = handle;
  });
  return d.cudnn;
}

void CudaBackend::synchronize(int device) {
  cudaStream_t s = stream(device);
  PerDevice& d = perDevice(device);
  DeviceGuard guard(device);
  std::lock_guard<std::mutex> lock(d.checkMutex);
  // The record's copy rides on the wait: queued before it, read after it.
  const bool checked = d.checkQueued;
  if (checked)
    CUDA_CHECK(cudaMemcpyAsync(d.checkRead, d.checkRecord, sizeof(cuda::CheckRecord), cudaMemcpyDeviceToHost, s));
  cuda::waitForStream(s);
  d.checkQueued = false;
  if (!checked || !cuda::checkFailed(d.checkRead)) return;
  // Reported once: the record is clean again for the work queued from now on.
  resetCheckRecord(d, s);
  throw Error(failedCheckMessage(d, device));
}

cuda::CheckRecord* CudaBackend::checkRecord(int device) {
  PerDevice& d = perDevice(device);
  cudaStream_t s = stream(device);
  std::call_once(d.checkOnce, [&] {
    DeviceGuard guard(device);
    void* record = nullptr;
    void* read = nullptr;
    try {
      CUDA_CHECK(cudaMalloc(&record, sizeof(cuda::CheckRecord)));
      CUDA_CHECK(cudaHostAlloc(&read, sizeof(cuda::CheckRecord), cudaHostAllocDefault));
      d.checkRecord = static_cast<cuda::CheckRecord*>(record);
      resetCheckRecord(d, s);
    } catch (...) {  // Note [Made whole or not at all]
      d.checkRecord = nullptr;
      if (record != nullptr) cudaFree(record);
      if (read != nullptr) cudaFreeHost(read);
      throw;
    }
    d.checkRead = static_cast<cuda::CheckRecord*>(read);
  });
  return d.checkRecord;
}

void CudaBackend::resetCheckRecord(PerDevice& d, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(&d.checkRecord->launch, cuda::kCleanLaunchByte, sizeof d.checkRecord->launch, stream));
  CUDA_CHECK(cudaMemsetAsync(&d.checkRecord->first, cuda::kCleanFirstByte, sizeof d.checkRecord->first, stream));
}

void CudaBackend::checkValues(const Device& device, const float* values, int64_t n, const ValueCheck& check,
                              FunctionRef<std::string()> who, const std::vector<int64_t>& sizes) {
  NN_CHECK(device.type() == DeviceType::CUDA, "CudaBackend.checkValues: expected a CUDA device, got " << device.str());
  if (n == 0) return;
  const int index = device.index();
  cuda::CheckRecord* record = checkRecord(index);
  PerDevice& d = perDevice(index);
  cudaStream_t s = stream(index);
  std::lock_guard<std::mutex> lock(d.checkMutex);
  // Numbered in the stream's order (the lock covers the launch); 0 means none.
  if (++d.checkLaunches == 0) d.checkLaunches = 1;
  PendingCheck& pending = d.pendingChecks[d.checkLaunches % kPendingChecks];
  pending.launch = d.checkLaunches;
  pending.check = check;
  pending.who = who();
  pending.sizes = sizes;
  DeviceGuard guard(index);
  cuda::launchCheckValues(values, static_cast<size_t>(n), check, d.checkLaunches, record, s);
  d.checkQueued = true;
}

std::string CudaBackend::failedCheckMessage(const PerDevice& d, int device) const {
  const cuda::CheckRecord& found = *d.checkRead;
  const int64_t position = cuda::failurePosition(found.first);
  const unsigned int bits = cuda::failureBits(found.first);
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  const std::string where = " (checked on cuda:" + std::to_string(device) + ", reported at its next host wait)";
  for (const PendingCheck& pending : d.pendingChecks)
    if (pending.launch == found.launch)
      return valueCheckMessage(pending.who, pending.check, pending.sizes, position, value) + where;
  return "a value check failed on cuda:" + std::to_string(device) + ": value " + std::to_string(value) +
         " at position " + std::to_string(position) + "; more than " + std::to_string(kPendingChecks) +
         " checks were queued after it before the host waited, so which module checked it is not known";
}

int64_t CudaBackend::hostSynchronizations() const { return cuda::hostWaitCount(); }

void CudaBackend::streamWait(int waiter, int device) {
  if (waiter == device) return;  // one stream: already in order
  waitForDevice(stream(waiter), device);
}

void CudaBackend::waitForDevice(cudaStream_t waiting, int device) {
  cudaStream_t s = stream(device);
  PerDevice& d = perDevice(device);
  std::lock_guard<std::mutex> lock(d.eventMutex);
  DeviceGuard guard(device);
  CUDA_CHECK(cudaEventRecord(d.event, s));
  CUDA_CHECK(cudaStreamWaitEvent(waiting, d.event, 0));
}

CudaBackend::PairStream& CudaBackend::pairStream(int a, int b) {
  const std::pair<int, int> key(std::min(a, b), std::max(a, b));
  std::lock_guard<std::mutex> lock(pairsMutex_);
  std::unique_ptr<PairStream>& entry = pairs_[key];
  if (entry) return *entry;
  // Note [Made whole or not at all]: a failure leaves no entry, and the next copy tries again.
  auto made = std::make_unique<PairStream>();
  try {
    DeviceGuard guard(key.first);
    CUDA_CHECK(cudaStreamCreateWithFlags(&made->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&made->done, cudaEventDisableTiming));
  } catch (...) {
    if (made->stream != nullptr) cudaStreamDestroy(made->stream);
    pairs_.erase(key);
    throw;
  }
  entry = std::move(made);
  return *entry;
}

CudaAllocator& CudaBackend::allocator(int device) { return perDevice(device).allocator; }

void* CudaBackend::allocate(const Device& device, size_t bytes) {
  NN_CHECK(device.type() == DeviceType::CUDA, "CudaBackend.allocate: expected a CUDA device, got " << device.str());
  return allocator(device.index()).allocate(bytes);
}

void CudaBackend::deallocate(const Device& device, void* ptr) noexcept {
  // Runs in Storage's destructor, so it must not throw; the device was checked when the
  // memory was allocated, and devices_ does not change after initialise().
  const int index = device.index();
  if (device.type() == DeviceType::CUDA && index < static_cast<int>(devices_.size()))
    devices_[index]->allocator.deallocate(ptr);
}

bool CudaBackend::peerAccess(int a, int b) {
  perDevice(a);
  perDevice(b);
  if (a == b) return true;
  std::lock_guard<std::mutex> lock(peerMutex_);
  const std::pair<int, int> key(std::min(a, b), std::max(a, b));
  const auto it = peer_.find(key);
  if (it != peer_.end()) return it->second;
  int ab = 0, ba = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, a, b));
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, b, a));
  const bool usable = ab != 0 && ba != 0;
  if (usable) {
    enablePeerAccess(a, b);
    enablePeerAccess(b, a);
  }
  peer_[key] = usable;
  return usable;
}

void CudaBackend::copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src,
                       const Device& srcDevice, const StridedView& srcView, int64_t count) {
  // nn::Tensor stages copies whose two sides overlap (Note [Overlapping copies] in
  // nn/tensor/Tensor.cpp); a view copied onto itself is left as it is.
  if (count == 0 || (dst == src && dstDevice == srcDevice && dstView.isContiguous() && srcView.isContiguous())) return;
  if (dstView.isContiguous() && srcView.isContiguous()) {
    copyBytes(dst, dstDevice, src, srcDevice, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  NN_CHECK(dstDevice == srcDevice && dstDevice.type() == DeviceType::CUDA,
           "CudaBackend.copy: strided copies run within one CUDA device, got " << srcDevice.str() << " to "
                                                                               << dstDevice.str());
  cudaStream_t s = stream(dstDevice.index());
  DeviceGuard guard(dstDevice.index());
  launchCopyStrided(dst, dstView, src, srcView, static_cast<size_t>(count), s);
}

void CudaBackend::copyBytes(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice,
                            size_t bytes) {
  if (srcDevice.isCpu()) {
    copyFromHost(dst, dstDevice.index(), src, bytes);
    return;
  }
  if (dstDevice.isCpu()) {
    copyToHost(dst, srcDevice.index(), src, bytes);
    return;
  }
  if (dstDevice == srcDevice) {
    cudaStream_t s = stream(dstDevice.index());
    DeviceGuard guard(dstDevice.index());
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    return;
  }
  if (!peerAccess(dstDevice.index(), srcDevice.index())) {
    copyThroughHost(dst, dstDevice.index(), src, srcDevice.index(), bytes);
    return;
  }
  // On the pair's copy stream, ordered by events (Note [Peer copies]).
  const int from = srcDevice.index();
  const int to = dstDevice.index();
  PairStream& pair = pairStream(from, to);
  std::lock_guard<std::mutex> lock(pair.mutex);
  waitForDevice(pair.stream, from);
  waitForDevice(pair.stream, to);
  DeviceGuard guard(std::min(from, to));
  CUDA_CHECK(cudaMemcpyPeerAsync(dst, to, src, from, bytes, pair.stream));
  CUDA_CHECK(cudaEventRecord(pair.done, pair.stream));
  CUDA_CHECK(cudaStreamWaitEvent(stream(to), pair.done, 0));
  CUDA_CHECK(cudaStreamWaitEvent(stream(from), pair.done, 0));
}

void CudaBackend::makeStaging(PerDevice& d, int device, size_t bytes) {
  size_t wanted = kStagingSlotMinBytes;
  while (wanted < bytes && wanted < kStagingSlotMaxBytes) wanted *= 2;
  if (d.stagingSlotBytes >= wanted) return;
  DeviceGuard guard(device);
  // Note [Made whole or not at all]: a failure leaves the old slots (or none) in place.
  std::array<char*, kStagingSlots> slots{};
  std::array<cudaEvent_t, kStagingSlots> events = d.stagingRead;
  try {
    for (size_t i = 0; i < kStagingSlots; ++i) {
      void* slot = nullptr;
      CUDA_CHECK(cudaHostAlloc(&slot, wanted, cudaHostAllocDefault));
      slots[i] = static_cast<char*>(slot);
      if (events[i] == nullptr) CUDA_CHECK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming));
    }
  } catch (...) {
    for (size_t i = 0; i < kStagingSlots; ++i) {
      if (slots[i] != nullptr) cudaFreeHost(slots[i]);
      if (events[i] != nullptr && d.stagingRead[i] == nullptr) cudaEventDestroy(events[i]);
    }
    throw;
  }
  // The old slots may still be read by queued copies.
  for (size_t i = 0; i < kStagingSlots; ++i)
    if (d.staging[i] != nullptr) {
      waitUntilRead(d, i);
      CUDA_CHECK(cudaFreeHost(d.staging[i]));
    }
  d.staging = slots;
  d.stagingRead = events;
  d.stagingSlotBytes = wanted;
}

void CudaBackend::waitUntilRead(PerDevice& d, size_t i) {
  // An event never recorded is complete: the host waits only where the copy still runs.
  const cudaError_t status = cudaEventQuery(d.stagingRead[i]);
  if (status == cudaErrorNotReady) {
    cudaGetLastError();  // not a failure: the copy is still running
    cuda::waitForEvent(d.stagingRead[i]);
  } else {
    CUDA_CHECK(status);
  }
}

void CudaBackend::copyFromHost(void* dst, int device, const void* src, size_t bytes) {
  PerDevice& d = perDevice(device);
  cudaStream_t s = stream(device);
  DeviceGuard guard(device);
  std::lock_guard<std::mutex> lock(d.stagingMutex);
  makeStaging(d, device, bytes);
  const size_t slotBytes = d.stagingSlotBytes;
  for (size_t done = 0; done < bytes; done += slotBytes) {
    const size_t chunk = std::min(slotBytes, bytes - done);
    const size_t i = d.nextSlot;
    d.nextSlot = (i + 1) % kStagingSlots;
    waitUntilRead(d, i);
    std::memcpy(d.staging[i], static_cast<const char*>(src) + done, chunk);
    CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + done, d.staging[i], chunk, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaEventRecord(d.stagingRead[i], s));
  }
}

void CudaBackend::copyToHost(void* dst, int device, const void* src, size_t bytes) {
  PerDevice& d = perDevice(device);
  cudaStream_t s = stream(device);
  DeviceGuard guard(device);
  std::lock_guard<std::mutex> lock(d.stagingMutex);
  makeStaging(d, device, 0);  // copies to the host use the slots as they are
  // Every slot at once, one wait for them all. A slot an earlier copy from the host still
  // reads is written only after it, in the stream's order.
  const size_t slotBytes = d.stagingSlotBytes;
  const size_t round = kStagingSlots * slotBytes;
  for (size_t done = 0; done < bytes; done += round) {
    const size_t part = std::min(round, bytes - done);
    for (size_t offset = 0, i = 0; offset < part; offset += slotBytes, ++i)
      CUDA_CHECK(cudaMemcpyAsync(d.staging[i], static_cast<const char*>(src) + done + offset,
                                 std::min(slotBytes, part - offset), cudaMemcpyDeviceToHost, s));
    synchronize(device);
    for (size_t offset = 0, i = 0; offset < part; offset += slotBytes, ++i)
      std::memcpy(static_cast<char*>(dst) + done + offset, d.staging[i], std::min(slotBytes, part - offset));
  }
}

void CudaBackend::copyThroughHost(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes) {
  cudaStream_t from = stream(srcDevice);
  cudaStream_t to = stream(dstDevice);
  std::lock_guard<std::mutex> lock(stagingMutex_);
  if (staging_ == nullptr) {
    DeviceGuard guard(srcDevice);
    CUDA_CHECK(cudaHostAlloc(&staging_, kStagingBytes, cudaHostAllocPortable));
  }
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t chunk = std::min(kStagingBytes, bytes - done);
    {
      DeviceGuard guard(srcDevice);
      CUDA_CHECK(cudaMemcpyAsync(staging_, static_cast<const char*>(src) + done, chunk, cudaMemcpyDeviceToHost, from));
      synchronize(srcDevice);
    }
    DeviceGuard guard(dstDevice);
    CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + done, staging_, chunk, cudaMemcpyHostToDevice, to));
    // The next chunk overwrites the staging buffer.
    synchronize(dstDevice);
  }
}

void checkCudaDevices(const std::vector<Device>& devices, const char* who) {
  NN_CHECK(!devices.empty(), who << ": expected at least one device");
  for (size_t i = 0; i < devices.size(); ++i) {
    NN_CHECK(devices[i].type() == DeviceType::CUDA, who << ": expected CUDA devices, got " << devices[i].str());
    for (size_t j = 0; j < i; ++j)
      NN_CHECK(devices[j] != devices[i], who << ": device " << devices[i].str() << " is listed twice");
    checkDeviceExists(devices[i]);
  }
}

std::unique_ptr<Communicator> CudaBackend::communicator(const std::vector<Device>& devices, bool useNCCL, ParallelFor) {
  if (useNCCL) {
    try {
      return std::make_unique<NcclCommunicator>(devices);
    } catch (const Error& e) {
      // NCCL is an optimisation: peer copies compute the same sums, so training goes on.
      static std::atomic<bool> said{false};
      if (!said.exchange(true))
        std::cerr << "nn.DataParallelTable: NCCL cannot run on " << devices[0].str()
                  << (devices.size() > 1 ? ", ..." : "") << " (" << e.what() << "); using peer copies\n";
    }
  }
  return std::make_unique<PeerCommunicator>(devices);
}

}  // namespace nn

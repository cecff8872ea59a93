// nn::Backend: all that a device type does for the library, in one object per type: its
// devices, their memory, copies, the collectives over several of them, and the kernels of
// every module and tensor operation (nn/backend/Kernels.h). Tensors and modules find it from
// a device (backendOf, kernelsOf) and never ask which type a device is.
//
// Note [Backends]
// The CPU backend (nn/cpu) is always there. The CUDA backend (nn/cuda) is built only where
// a CUDA toolkit was found, and installs itself (installBackend) when its library is linked,
// during static initialisation; nn never includes a CUDA header. A build without it is a
// whole CPU build, in which asking for a CUDA device is the same nn::Error as on a machine
// without a GPU. Each backend's folder holds its memory, its copies, its communicators and
// one table of kernels per module, filled in with the same function names and argument
// orders (Torch7's THNN and THCUNN); the formulas those kernels compute are in nn/math. The
// families are listed once (nn/backend/KernelFamilies.h), and a backend is not made with an
// entry of a table left null (checkKernelsFilled): a missing kernel is an error at start, naming
// it, not a call through a null pointer when a module first needs it.
//
// Note [Host synchronisations]
// A backend whose devices are not the host's memory queues work and lets the host run ahead:
// the host waits for a device only where it reads a value of the device's memory (a copy to
// the host: a loss a criterion's forward returns, Tensor::item, toVector) or where a buffer
// it lends to the device is about to be reused. A steady training step that does not read its
// loss therefore makes no wait, and one that reads it makes one. Checks of a tensor's values
// (class targets, indices, probabilities) run where the values are (checkValues): on the host
// at once, on such a device in a kernel whose failure, the error the host check would give,
// is thrown by that device's next wait. hostSynchronizations() counts the waits, for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/backend/Kernels.h"
#include "nn/math/ValueCheck.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

class Communicator;

/// A check of a tensor's values (Note [Host synchronisations]): each value must be of `kind`
/// (nn/math/ValueCheck.h), below `limit` for the index kinds.
struct ValueCheck {
  /// What each value must be: a class index, an index or a probability.
  math::ValueKind kind;
  /// One past the largest index allowed (ClassTarget and Index: the values lie in [0, limit)); unused otherwise.
  int64_t limit = 0;
};

/// One device type's implementation of the library (Note [Backends]): its devices' memory, copies,
/// communicators and value checks, and its kernel tables. One object per type, found by backendOf.
class Backend {
 public:
  /// Runs task(i) for i < count at once and returns when all are done.
  using ParallelFor = std::function<void(size_t count, FunctionRef<void(size_t)> task)>;

  /// The backend of `type`'s devices, with a copy of `kernels`, the tables its folder filled in;
  /// an nn::Error where an entry of a table is null (checkKernelsFilled).
  Backend(DeviceType type, const Kernels& kernels);
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// The device type this backend serves.
  DeviceType type() const { return type_; }
  /// The kernels of every module and tensor operation on this type's devices.
  const Kernels& kernels() const { return kernels_; }

  /// How many devices of this type the process can use; 0 where none can.
  virtual int deviceCount() = 0;
  /// Why deviceCount() is 0, as the runtime said it; empty otherwise.
  virtual std::string unavailableReason() = 0;
  /// Makes `device` current on the calling thread, for a thread that serves one device.
  virtual void makeCurrent(const Device& device) = 0;

  /// At least `bytes` of memory on `device`; an nn::Error where there is none.
  virtual void* allocate(const Device& device, size_t bytes) = 0;
  /// Gives back memory from allocate(). Must not throw: Storage's destructor calls it.
  virtual void deallocate(const Device& device, void* ptr) noexcept = 0;
  /// True where this type's memory is the host's (the CPU): the other backend of a copy
  /// between the host and a device is then the one that copies.
  virtual bool isHost() const = 0;
  /// Copies `count` floats, element e of src (seen as srcView) to element e of dst (seen as
  /// dstView), between any two devices of this type or of the host; the views may be strided
  /// where copiesStrided(dstDevice, srcDevice), else both are contiguous. Returns when host
  /// memory on either side may be used again, and later operations on either device see the copy.
  virtual void copy(float* dst, const Device& dstDevice, const StridedView& dstView, const float* src,
                    const Device& srcDevice, const StridedView& srcView, int64_t count) = 0;
  /// Whether copy() takes strided views between these two devices (Tensor::copy_ makes the
  /// views contiguous first where not).
  virtual bool copiesStrided(const Device& dstDevice, const Device& srcDevice) const = 0;
  /// Copies `bytes` contiguous bytes from src to dst, between any two devices of this type or of
  /// the host, as copy() copies contiguous floats: the tensors of the 16-bit element types move
  /// between devices this way (Tensor::copy_), converted on one side.
  virtual void copyBytes(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice,
                         size_t bytes) = 0;

  /// The collectives over `devices`, all of this type (nn/backend/Communicator.h). useNCCL
  /// asks for NCCL where this type has it; `parallel`, where given, runs a call's work on the
  /// devices' threads.
  virtual std::unique_ptr<Communicator> communicator(const std::vector<Device>& devices, bool useNCCL,
                                                     ParallelFor parallel) = 0;

  /// Checks the n contiguous floats at `values` on `device` against `check`. The first that
  /// fails is an nn::Error from valueCheckMessage(who(), check, sizes, ...), `sizes` those of
  /// the tensor checked. Here, on the host, at once; a backend of devices that are not the
  /// host's memory overrides it to check on the device and throw at the device's next host
  /// wait (Note [Host synchronisations]).
  virtual void checkValues(const Device& device, const float* values, int64_t n, const ValueCheck& check,
                           FunctionRef<std::string()> who, const std::vector<int64_t>& sizes);
  /// How many times the host has waited for a device of this type so far, every device and
  /// thread together (Note [Host synchronisations]); 0 for the host's own devices.
  virtual int64_t hostSynchronizations() const { return 0; }
  /// Told when nn::setNumThreads sets the compute threads of every device of this type.
  virtual void setComputeThreads(int /*threads*/) {}

 private:
  DeviceType type_;
  Kernels kernels_;
};

/// The error of a failed value check: value `value` at `position` of a tensor of `sizes`,
/// checked by `who` ("nn.ClassNLLCriterion"): "nn.ClassNLLCriterion: target 12 at position 3
/// is not a class index in [0, 10)".
std::string valueCheckMessage(const std::string& who, const ValueCheck& check, const std::vector<int64_t>& sizes,
                              int64_t position, float value);

/// Every entry of `kernels`' tables left null, in the order of NN_KERNEL_FAMILIES and of each
/// table's members (nn/backend/KernelEntries.h), each named by its family member and path with
/// its table's struct: "linear.accGradParameters (LinearKernels)",
/// "elementwise.activations[3].backward (ElementwiseKernels)". Empty where every entry is filled.
std::vector<std::string> unfilledKernelEntries(const Kernels& kernels);
/// An nn::Error naming `type` and every entry that unfilledKernelEntries finds, unless there is
/// none: no backend is made with a kernel that would be called through a null pointer.
void checkKernelsFilled(DeviceType type, const Kernels& kernels);

/// The backend of a device type; for a type this build has no backend for, an nn::Error
/// that names `device` and says so.
Backend& backendOf(const Device& device);
/// The kernels of `device`'s type: backendOf(device).kernels().
inline const Kernels& kernelsOf(const Device& device) { return backendOf(device).kernels(); }
/// Installs the backend of a type other than the CPU's; the CUDA backend calls it once, at
/// static initialisation, when it is linked.
void installBackend(Backend& backend);
/// The installed backend of `type`, or nullptr (for tests and the test runner).
Backend* findBackend(DeviceType type);
/// The CPU backend, built into every program: defined by the CPU backend's folder (nn/cpu),
/// which the library (//nn) always links, so that this interface includes none of its headers.
Backend& cpuBackend();

}  // namespace nn

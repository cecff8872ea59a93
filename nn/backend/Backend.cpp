// Finding a device's backend, the checks that every communicator shares, and the host's
// check of a tensor's values.
#include "nn/backend/Backend.h"

#include <array>
#include <atomic>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nn/backend/Communicator.h"
#include "nn/backend/KernelEntries.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// The backends of the types other than the CPU's, installed when their library is linked.
std::atomic<Backend*> gCudaBackend{nullptr};

// The walk over a table's entries (nn/backend/KernelEntries.h): each visitEntry adds to
// `unfilled` the path of every null function pointer under `path`. One overload per table,
// declared first so that the array's template finds the tables within tables.
#define NN_DECLARE_VISIT(Table, ...) \
  void visitEntry(const std::string& path, const Table& table, std::vector<std::string>& unfilled);
NN_KERNEL_FAMILIES(NN_DECLARE_VISIT)
NN_NESTED_KERNEL_TABLES(NN_DECLARE_VISIT)
#undef NN_DECLARE_VISIT

template <typename R, typename... Args>
void visitEntry(const std::string& path, R (*entry)(Args...), std::vector<std::string>& unfilled) {
  if (entry == nullptr) unfilled.push_back(path);
}

template <typename Table, size_t N>
void visitEntry(const std::string& path, const std::array<Table, N>& tables, std::vector<std::string>& unfilled) {
  for (size_t i = 0; i < N; ++i) visitEntry(path + "[" + std::to_string(i) + "]", tables[i], unfilled);
}

// Each table's entries, and the check that its list names all its members: the members' sizes
// add up to the table's only where none is left out (every member takes at least a byte), and
// a member of another kind than a function pointer or a table has no visitEntry.
#define NN_ENTRY_BYTES(entry) +sizeof(Listed::entry)
#define NN_VISIT_MEMBER(entry) visitEntry(path + "." #entry, table.entry, unfilled);
#define NN_DEFINE_VISIT(Table, ...)                                                                  \
  void visitEntry(const std::string& path, const Table& table, std::vector<std::string>& unfilled) { \
    using Listed = Table;                                                                            \
    static_assert(sizeof(Listed) == 0 NN_KERNEL_ENTRIES_##Table(NN_ENTRY_BYTES),                     \
                  "a member of " #Table " is missing from its list in nn/backend/KernelEntries.h");  \
    NN_KERNEL_ENTRIES_##Table(NN_VISIT_MEMBER)                                                       \
  }
NN_KERNEL_FAMILIES(NN_DEFINE_VISIT)
NN_NESTED_KERNEL_TABLES(NN_DEFINE_VISIT)
#undef NN_DEFINE_VISIT
#undef NN_VISIT_MEMBER
#undef NN_ENTRY_BYTES

}  // namespace

std::vector<std::string> unfilledKernelEntries(const Kernels& kernels) {
  std::vector<std::string> unfilled;
#define NN_VISIT_FAMILY(Table, member)                                            \
  {                                                                               \
    std::vector<std::string> entries;                                             \
    visitEntry(#member, kernels.member, entries);                                 \
    for (const std::string& e : entries) unfilled.push_back(e + " (" #Table ")"); \
  }
  NN_KERNEL_FAMILIES(NN_VISIT_FAMILY)
#undef NN_VISIT_FAMILY
  return unfilled;
}

void checkKernelsFilled(DeviceType type, const Kernels& kernels) {
  const std::vector<std::string> unfilled = unfilledKernelEntries(kernels);
  if (unfilled.empty()) return;
  std::ostringstream s;
  s << "nn::Backend: the " << deviceTypeName(type) << " backend's kernel tables leave " << unfilled.size()
    << (unfilled.size() == 1 ? " entry" : " entries") << " null: ";
  for (size_t i = 0; i < unfilled.size(); ++i) s << (i == 0 ? "" : ", ") << unfilled[i];
  s << "; every entry of every table (nn/backend/KernelFamilies.h) must be filled";
  throw Error(s.str());
}

Backend::Backend(DeviceType type, const Kernels& kernels) : type_(type), kernels_(kernels) {
  checkKernelsFilled(type, kernels);
}

Backend* findBackend(DeviceType type) {
  return type == DeviceType::CPU ? &cpuBackend() : gCudaBackend.load(std::memory_order_acquire);
}

Backend& backendOf(const Device& device) {
  Backend* backend = findBackend(device.type());
  NN_CHECK(backend != nullptr, "nn.Device: no CUDA device available for "
                                   << device.str()
                                   << ": this build has no CUDA backend (no CUDA toolkit was found when it was "
                                      "built, or the program does not link //cunn)");
  return *backend;
}

void installBackend(Backend& backend) {
  NN_CHECK(backend.type() != DeviceType::CPU, "nn::installBackend: the CPU backend is built in");
  gCudaBackend.store(&backend, std::memory_order_release);
}

std::string valueCheckMessage(const std::string& who, const ValueCheck& check, const std::vector<int64_t>& sizes,
                              int64_t position, float value) {
  std::ostringstream s;
  s << who << ": ";
  switch (check.kind) {
    case math::ValueKind::ClassTarget:
      s << "target " << value << " at position " << position << " is not a class index in [0, " << check.limit << ")";
      break;
    case math::ValueKind::Index:
      s << "expected indices from 0 to " << check.limit - 1 << ", got " << value << " at position " << position
        << " of " << shapeString(sizes);
      break;
    case math::ValueKind::UnitInterval:
      s << "expected input in [0, 1], got " << value << " at position " << position << " of " << shapeString(sizes);
      break;
  }
  return s.str();
}

void Backend::checkValues(const Device&, const float* values, int64_t n, const ValueCheck& check,
                          FunctionRef<std::string()> who, const std::vector<int64_t>& sizes) {
  for (int64_t i = 0; i < n; ++i)
    if (!math::passesValueCheck(check.kind, check.limit, values[i]))
      throw Error(valueCheckMessage(who(), check, sizes, i, values[i]));
}

std::unique_ptr<Communicator> makeCommunicator(const std::vector<Device>& devices, bool useNCCL,
                                               Backend::ParallelFor parallel) {
  NN_CHECK(!devices.empty(), "makeCommunicator: expected at least one device");
  std::set<Device> seen;
  for (const Device& d : devices) {
    NN_CHECK(d.type() == devices[0].type(),
             "makeCommunicator: expected devices of one type, got " << devices[0].str() << " and " << d.str());
    NN_CHECK(seen.insert(d).second, "makeCommunicator: device " << d.str() << " is listed twice");
    checkDeviceExists(d);
  }
  return backendOf(devices[0]).communicator(devices, useNCCL, std::move(parallel));
}

void checkCollectiveTensors(const std::vector<Tensor>& tensors, const std::vector<Device>& devices, const char* who) {
  NN_CHECK(tensors.size() == devices.size(), who << ": expected one tensor per device of the communicator ("
                                                 << devices.size() << "), got " << tensors.size()
                                                 << "; every rank takes part in every call");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NN_CHECK(t.device() == devices[i],
             who << ": expected tensor " << i << " on " << devices[i].str() << ", got one on " << t.device().str());
    NN_CHECK(t.isContiguous() && t.sizes() == tensors[0].sizes(), who << ": tensor " << i << " has sizes "
                                                                      << t.shapeString() << ", expected contiguous "
                                                                      << tensors[0].shapeString());
  }
}

void checkScatterTensors(const Tensor& source, const std::vector<Tensor>& parts, const std::vector<Device>& devices,
                         const char* who) {
  NN_CHECK(parts.size() == devices.size(), who << ": expected one part per device of the communicator ("
                                               << devices.size() << "), got " << parts.size()
                                               << "; every rank takes part in every call");
  NN_CHECK(source.device() == devices[0] && source.isContiguous(),
           who << ": expected a contiguous source on " << devices[0].str() << ", got "
               << (source.isContiguous() ? "one" : "a non-contiguous one") << " on " << source.device().str());
  int64_t left = source.numel();
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i];
    NN_CHECK(t.device() == devices[i],
             who << ": expected part " << i << " on " << devices[i].str() << ", got one on " << t.device().str());
    NN_CHECK(t.isContiguous(), who << ": part " << i << " of sizes " << t.shapeString() << " is not contiguous");
    // Counted down from the source's size, so that no sum of the parts' sizes can overflow.
    NN_CHECK(t.numel() <= left,
             who << ": the parts up to " << i << " hold more than the source's " << source.numel() << " elements");
    left -= t.numel();
  }
  NN_CHECK(left == 0,
           who << ": the parts hold " << source.numel() - left << " elements, the source " << source.numel());
}

}  // namespace nn

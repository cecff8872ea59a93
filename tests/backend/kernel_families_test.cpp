// The kernel families (nn/backend/KernelFamilies.h) and the check that every entry of a
// backend's tables is filled (nn::checkKernelsFilled, nn/backend/KernelEntries.h): a backend
// made with a null entry is refused with an error naming its device type, family and entry;
// every function pointer of nn::Kernels is an entry the check names; the CPU backend's tables
// and, in the CUDA build, the CUDA backend's are complete.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cunn/cunn.h"
#include "nn/backend/Backend.h"
#include "tests/support/Skip.h"

using Catch::Contains;
using nn::Device;
using nn::DeviceType;
using nn::Kernels;

namespace {

// nn::Kernels seen as the array of function pointers it is made of: every table is a struct of
// function pointers, of tables, or of arrays of tables.
using AnyEntry = void (*)();
static_assert(sizeof(Kernels) % sizeof(AnyEntry) == 0, "nn::Kernels is a whole number of function pointers");
constexpr size_t kSlots = sizeof(Kernels) / sizeof(AnyEntry);

// `kernels` with function pointer `slot` (counted in function pointers from the start) null.
Kernels withNullSlot(const Kernels& kernels, size_t slot) {
  Kernels copy = kernels;
  const AnyEntry null = nullptr;
  std::memcpy(reinterpret_cast<unsigned char*>(&copy) + slot * sizeof(AnyEntry), &null, sizeof(null));
  return copy;
}

// A backend that only holds its kernels: enough to run Backend's constructor.
class TablesOnly : public nn::Backend {
 public:
  TablesOnly(DeviceType type, const Kernels& kernels) : Backend(type, kernels) {}
  int deviceCount() override { return 0; }
  std::string unavailableReason() override { return "tables only"; }
  void makeCurrent(const Device&) override {}
  void* allocate(const Device&, size_t) override { return nullptr; }
  void deallocate(const Device&, void*) noexcept override {}
  bool isHost() const override { return false; }
  void copy(float*, const Device&, const nn::StridedView&, const float*, const Device&, const nn::StridedView&,
            int64_t) override {}
  bool copiesStrided(const Device&, const Device&) const override { return false; }
  void copyBytes(void*, const Device&, const void*, const Device&, size_t) override {}
  std::unique_ptr<nn::Communicator> communicator(const std::vector<Device>&, bool, ParallelFor) override {
    return nullptr;
  }
};

const Kernels& cpuKernels() { return nn::cpuBackend().kernels(); }

}  // namespace

TEST_CASE("every entry of the CPU backend's kernel tables is filled", "[KernelFamilies]") {
  CHECK(nn::unfilledKernelEntries(cpuKernels()).empty());
  // Every function pointer, read as the raw slots of the struct: none is null.
  for (size_t slot = 0; slot < kSlots; ++slot) {
    AnyEntry entry;
    std::memcpy(&entry, reinterpret_cast<const unsigned char*>(&cpuKernels()) + slot * sizeof(AnyEntry), sizeof(entry));
    INFO("slot " << slot);
    CHECK(entry != nullptr);
  }
}

TEST_CASE("every entry of the CUDA backend's kernel tables is filled", "[KernelFamilies]") {
  // Making the backend, at static initialisation where //nn/cuda is linked, touches no device:
  // this runs without a GPU.
  nn::Backend* cuda = nn::findBackend(DeviceType::CUDA);
  if (cuda == nullptr) NN_SKIP("this build has no CUDA backend");
  CHECK(nn::unfilledKernelEntries(cuda->kernels()).empty());
  CHECK(&cuda->kernels() != &cpuKernels());
}

TEST_CASE("every function pointer of nn::Kernels is an entry the check names once", "[KernelFamilies]") {
  // Each slot made null alone: the check finds exactly one entry, and no two slots share a name,
  // so no entry of any table is left out of nn/backend/KernelEntries.h's lists.
  std::set<std::string> names;
  for (size_t slot = 0; slot < kSlots; ++slot) {
    const std::vector<std::string> unfilled = nn::unfilledKernelEntries(withNullSlot(cpuKernels(), slot));
    INFO("slot " << slot);
    REQUIRE(unfilled.size() == 1);
    names.insert(unfilled[0]);
  }
  CHECK(names.size() == kSlots);
  // A function pointer of each kind of place: a family's own, in a table within it, in an array
  // of tables, first and last of nn::Kernels.
  CHECK(names.count("tensor.fill (TensorKernels)") == 1);
  CHECK(names.count("linear.accGradParameters (LinearKernels)") == 1);
  CHECK(names.count("pooling.upSamplingNearest.backward (PoolingKernels)") == 1);
  CHECK(names.count("elementwise.activations[0].forward (ElementwiseKernels)") == 1);
  CHECK(names.count("criterion.pointwise[0].gradient (CriterionKernels)") == 1);
  CHECK(names.count("lookup.accumulate (LookupKernels)") == 1);
  // The first slot is the first family's first entry, the last the last family's last.
  CHECK(nn::unfilledKernelEntries(withNullSlot(cpuKernels(), 0)) ==
        std::vector<std::string>{"tensor.fill (TensorKernels)"});
  CHECK(nn::unfilledKernelEntries(withNullSlot(cpuKernels(), kSlots - 1)) ==
        std::vector<std::string>{"lookup.accumulate (LookupKernels)"});
}

TEST_CASE("a backend whose tables leave an entry null is refused, naming the type, family and entry",
          "[KernelFamilies]") {
  Kernels one = cpuKernels();
  one.linear.accGradParameters = nullptr;
  REQUIRE_THROWS_WITH(TablesOnly(DeviceType::CUDA, one),
                      Contains("nn::Backend: the CUDA backend's kernel tables leave 1 entry null: "
                               "linear.accGradParameters (LinearKernels)"));
  REQUIRE_THROWS_AS(TablesOnly(DeviceType::CUDA, one), nn::Error);

  // Every null entry is named, in the order of the families and of each table's members.
  Kernels two = cpuKernels();
  two.pooling.adaptiveAverage.forward = nullptr;
  two.elementwise.activations[2].backward = nullptr;
  REQUIRE_THROWS_WITH(nn::checkKernelsFilled(DeviceType::CPU, two),
                      Contains("the CPU backend's kernel tables leave 2 entries null: "
                               "elementwise.activations[2].backward (ElementwiseKernels), "
                               "pooling.adaptiveAverage.forward (PoolingKernels)"));

  // The complete tables make a backend.
  REQUIRE_NOTHROW(TablesOnly(DeviceType::CUDA, cpuKernels()));
  REQUIRE_NOTHROW(nn::checkKernelsFilled(DeviceType::CPU, cpuKernels()));
}

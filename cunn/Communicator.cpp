// makeCommunicator: picks the communicator for a device set.
#include "cunn/Communicator.h"

#include <atomic>
#include <iostream>

#include "cunn/HostCommunicator.h"
#include "cunn/cuda/CollectiveChecks.h"
#include "cunn/cuda/NcclCommunicator.h"
#include "cunn/cuda/PeerCommunicator.h"
#include "nn/Error.h"

namespace nn {

namespace {

// Says `message` on stderr the first time it is called with this flag.
void sayOnce(std::atomic<bool>& said, const std::string& message) {
  if (!said.exchange(true)) std::cerr << message << "\n";
}

std::string deviceList(const std::vector<Device>& devices) {
  return devices[0].str() + (devices.size() > 1 ? ", ..." : "");
}

}  // namespace

std::unique_ptr<Communicator> makeCommunicator(const std::vector<Device>& devices, bool useNCCL,
                                               DeviceThreads* threads) {
  NN_CHECK(!devices.empty(), "makeCommunicator: expected at least one device");
  for (const Device& d : devices)
    NN_CHECK(d.type() == devices[0].type(),
             "makeCommunicator: expected devices of one type, got " << devices[0].str() << " and " << d.str());
  if (devices[0].isCpu()) {
    static std::atomic<bool> said{false};
    if (useNCCL)
      sayOnce(said,
              "nn.DataParallelTable: NCCL runs on CUDA devices only; using host copies for " + deviceList(devices));
    if (!threads) return std::make_unique<HostCommunicator>();
    return std::make_unique<HostCommunicator>(
        threads->size(), [threads](size_t count, FunctionRef<void(size_t)> task) { threads->run(count, task); });
  }
  // Devices that do not exist are an error of the caller, not a reason to leave NCCL.
  checkCollectiveDevices(devices, "makeCommunicator");
  if (useNCCL) {
    try {
      return std::make_unique<NcclCommunicator>(devices);
    } catch (const Error& e) {
      // NCCL is an optimisation: peer copies compute the same sums, so training goes on.
      static std::atomic<bool> said{false};
      sayOnce(said, "nn.DataParallelTable: NCCL cannot run on " + deviceList(devices) + " (" + e.what() +
                        "); using peer copies");
    }
  }
  return std::make_unique<PeerCommunicator>(devices);
}

}  // namespace nn

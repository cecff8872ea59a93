// makeCommunicator: picks the communicator for a device set.
#include "cunn/Communicator.h"

#include <atomic>
#include <iostream>

#include "cunn/HostCommunicator.h"
#include "nn/Error.h"

namespace nn {

std::unique_ptr<Communicator> makeCommunicator(const std::vector<Device>& devices, bool useNCCL) {
  NN_CHECK(!devices.empty(), "makeCommunicator: expected at least one device");
  bool allCpu = true;
  for (const Device& d : devices) allCpu = allCpu && d.isCpu();
  NN_CHECK(allCpu,
           "makeCommunicator: CUDA devices need the CUDA backend's communicators, which this build "
           "does not have; got "
               << devices[0].str());
  if (useNCCL) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::cerr << "nn.DataParallelTable: NCCL runs on CUDA devices only; using host copies for " << devices[0].str()
                << (devices.size() > 1 ? ", ..." : "") << "\n";
  }
  return std::make_unique<HostCommunicator>();
}

}  // namespace nn

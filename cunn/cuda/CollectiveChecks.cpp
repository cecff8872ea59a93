// Argument checks of the CUDA communicators.
#include "cunn/cuda/CollectiveChecks.h"

#include <set>

#include "nn/Error.h"

namespace nn {

void checkCollectiveDevices(const std::vector<Device>& devices, const char* who) {
  NN_CHECK(!devices.empty(), who << ": expected at least one device");
  std::set<Device> seen;
  for (const Device& d : devices) {
    NN_CHECK(d.isCuda(), who << ": expected CUDA devices, got " << d.str());
    NN_CHECK(seen.insert(d).second, who << ": device " << d.str() << " is listed twice");
    checkDeviceExists(d);
  }
}

void checkCollectiveTensors(const std::vector<Tensor>& tensors, const std::vector<Device>& devices, const char* who) {
  NN_CHECK(tensors.size() == devices.size(),
           who << ": expected one tensor per device (" << devices.size() << "), got " << tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NN_CHECK(t.device() == devices[i],
             who << ": expected tensor " << i << " on " << devices[i].str() << ", got one on " << t.device().str());
    NN_CHECK(t.isContiguous() && t.sizes() == tensors[0].sizes(), who << ": tensor " << i << " has sizes "
                                                                      << t.shapeString() << ", expected contiguous "
                                                                      << tensors[0].shapeString());
  }
}

}  // namespace nn

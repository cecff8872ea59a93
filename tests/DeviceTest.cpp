// DeviceKind: the devices of the type a test body runs on.
#include "tests/DeviceTest.h"

#include "nn/backend/Backend.h"

namespace nn::test {

std::string DeviceKind::name() const { return isCpu() ? "cpu" : "cuda"; }

int DeviceKind::available() const {
  Backend* backend = findBackend(type_);
  return backend != nullptr ? backend->deviceCount() : 0;
}

std::vector<Device> DeviceKind::devices(int count) const {
  INFO("the test needs " << count << " " << name() << " devices");
  REQUIRE(count <= available());
  std::vector<Device> out;
  for (int i = 0; i < count; ++i) out.push_back(device(i));
  return out;
}

}  // namespace nn::test

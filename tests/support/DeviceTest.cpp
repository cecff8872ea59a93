// DeviceKind: the devices of the type a test body runs on; strided copies of host tensors.
#include "tests/support/DeviceTest.h"

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

Tensor stridedOn(const Tensor& host, const Device& device) {
  std::vector<int64_t> sizes = host.sizes();
  sizes.push_back(2);
  Tensor wide = Tensor::zeros(sizes);
  wide.select(host.dim(), 0).copy_(host);
  const Tensor t = wide.to(device).select(host.dim(), 0);
  REQUIRE_FALSE(t.isContiguous());
  return t;
}

}  // namespace nn::test

// Device parsing and existence checks.
#include "nn/Device.h"

#include <atomic>
#include <cctype>

#include "nn/DeviceBackend.h"
#include "nn/Error.h"

namespace nn {

namespace {
std::atomic<DeviceBackend*> gCudaBackend{nullptr};
}

void registerCudaBackend(DeviceBackend* backend) { gCudaBackend.store(backend); }
DeviceBackend* cudaBackend() { return gCudaBackend.load(); }

std::string shapeString(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  NN_CHECK(index >= 0, "nn.Device: expected a device index >= 0, got " << index);
}

std::string Device::str() const { return std::string(isCpu() ? "cpu:" : "cuda:") + std::to_string(index_); }

Device Device::parse(const std::string& text) {
  std::string kind = text;
  int index = 0;
  const auto colon = text.find(':');
  if (colon != std::string::npos) {
    kind = text.substr(0, colon);
    const std::string digits = text.substr(colon + 1);
    bool ok = !digits.empty() && digits.size() <= 6;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    NN_CHECK(ok, "nn.Device: expected a device like cpu:0 or cuda:1, got '" << text << "'");
    index = std::stoi(digits);
  }
  NN_CHECK(kind == "cpu" || kind == "cuda", "nn.Device: expected a device like cpu:0 or cuda:1, got '" << text << "'");
  Device device(kind == "cpu" ? DeviceType::CPU : DeviceType::CUDA, index);
  checkDeviceExists(device);
  return device;
}

void checkDeviceExists(const Device& device) {
  if (device.isCpu()) {
    NN_CHECK(device.index() < kMaxCpuDevices,
             "nn.Device: " << device.str()
                           << " does not exist: logical CPU devices are cpu:0 to cpu:" << kMaxCpuDevices - 1);
    return;
  }
  DeviceBackend* backend = cudaBackend();
  NN_CHECK(backend != nullptr, "nn.Device: no CUDA device available for "
                                   << device.str() << ": this program was built without the CUDA backend (//cunn)");
  const int count = backend->deviceCount();
  NN_CHECK(count > 0,
           "nn.Device: no CUDA device available for " << device.str() << ": " << backend->unavailableReason());
  NN_CHECK(device.index() < count,
           "nn.Device: " << device.str() << " does not exist: this machine has " << count << " CUDA device(s)");
}

}  // namespace nn

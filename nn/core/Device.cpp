// Device parsing and existence checks.
#include "nn/core/Device.h"

#include <cctype>

#include "nn/backend/Backend.h"
#include "nn/core/Error.h"

namespace nn {

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

const char* deviceTypeName(DeviceType type) { return type == DeviceType::CPU ? "CPU" : "CUDA"; }

void checkDeviceExists(const Device& device) {
  Backend& backend = backendOf(device);
  const int count = backend.deviceCount();
  NN_CHECK(count > 0, "nn.Device: no " << deviceTypeName(device.type()) << " device available for " << device.str()
                                       << ": " << backend.unavailableReason());
  NN_CHECK(device.index() < count, "nn.Device: " << device.str() << " does not exist: there are " << count << " "
                                                 << deviceTypeName(device.type()) << " devices, "
                                                 << Device(device.type(), 0).str() << " to "
                                                 << Device(device.type(), count - 1).str());
}

}  // namespace nn

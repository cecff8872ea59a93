// Device parsing and existence checks.
#include "nn/tensor/Device.h"

#include <cctype>

#include "nn/tensor/Error.h"

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

const char* deviceTypeName(DeviceType type) { return type == DeviceType::CPU ? "CPU" : "CUDA"; }

}  // namespace nn

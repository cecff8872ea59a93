// Device: where a tensor's memory lives. "cpu:N" are logical CPU devices, each its own
// memory domain, so multi-device code runs for real without a GPU; "cuda:N" are GPUs.
#pragma once

#include <cstdint>
#include <string>

namespace nn {

enum class DeviceType { CPU, CUDA };

class Device {
 public:
  /// cpu:0
  Device() = default;
  Device(DeviceType type, int index);

  static Device cpu(int index = 0) { return Device(DeviceType::CPU, index); }
  static Device cuda(int index = 0) { return Device(DeviceType::CUDA, index); }

  /// Parses "cpu", "cpu:1", "cuda:0", "cuda" and checks that the device exists: a CUDA
  /// device on a machine without one is an nn::Error that gives the runtime's reason.
  static Device parse(const std::string& text);

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool isCpu() const { return type_ == DeviceType::CPU; }
  /// "cpu:0", "cuda:1"
  std::string str() const;

  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool operator<(const Device& o) const { return type_ != o.type_ ? type_ < o.type_ : index_ < o.index_; }

 private:
  DeviceType type_ = DeviceType::CPU;
  int index_ = 0;
};

/// Logical CPU devices available: cpu:0 .. cpu:(kMaxCpuDevices-1).
constexpr int kMaxCpuDevices = 64;

/// "CPU", "CUDA"
const char* deviceTypeName(DeviceType type);

/// Throws an nn::Error unless `device` exists on this machine.
void checkDeviceExists(const Device& device);

}  // namespace nn

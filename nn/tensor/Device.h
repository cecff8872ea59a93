// Device: where a tensor's memory lives. "cpu:N" are logical CPU devices, each its own
// memory domain, so multi-device code runs for real without a GPU; "cuda:N" are GPUs.
#pragma once

#include <cstdint>
#include <string>

namespace nn {

/// The kind of device: CPU, host memory ("cpu:N", logical devices), or CUDA, a GPU ("cuda:N").
enum class DeviceType { CPU, CUDA };

/// A device: a type and an index, "cpu:0" or "cuda:1". A plain value; making one does not check
/// that it exists (parse() and the first allocation on it do).
class Device {
 public:
  /// cpu:0
  Device() = default;
  /// Device `index` (at least 0, else an nn::Error) of `type`.
  Device(DeviceType type, int index);

  /// The logical CPU device cpu:index.
  static Device cpu(int index = 0) { return Device(DeviceType::CPU, index); }
  /// The GPU cuda:index.
  static Device cuda(int index = 0) { return Device(DeviceType::CUDA, index); }

  /// Parses "cpu", "cpu:1", "cuda:0", "cuda" and checks that the device exists: a CUDA
  /// device on a machine without one is an nn::Error that gives the runtime's reason.
  static Device parse(const std::string& text);

  /// CPU or CUDA.
  DeviceType type() const { return type_; }
  /// The index among the devices of its type, from 0.
  int index() const { return index_; }
  /// True for a CPU device (host memory, which Tensor::data() may read).
  bool isCpu() const { return type_ == DeviceType::CPU; }
  /// "cpu:0", "cuda:1"
  std::string str() const;

  /// Same type and index.
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  /// Another type or index.
  bool operator!=(const Device& o) const { return !(*this == o); }
  /// CPU devices before CUDA devices, then by index: an order for std::map and std::sort.
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

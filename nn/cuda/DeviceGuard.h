// DeviceGuard: makes a CUDA device current for the calling thread for one scope, and makes
// the previous one current again when the scope ends.
#pragma once

#include "nn/tensor/Device.h"

namespace nn {

class DeviceGuard {
 public:
  /// Makes cuda:`index` current (a no-op when it already is).
  explicit DeviceGuard(int index);
  /// `device` must be a CUDA device.
  explicit DeviceGuard(const Device& device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int current_ = -1;
};

}  // namespace nn

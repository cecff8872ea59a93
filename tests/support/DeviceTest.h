// One test body, every device type (Caffe's typed tests): NN_DEVICE_TEST_CASE registers its
// body twice, as "<name> on cpu" run on CPU devices and as "<name> on cuda" tagged [gpu] run on
// CUDA devices. Where no CUDA device can be used (no GPU, or a build without the CUDA backend)
// tests/support/main.cpp leaves the CUDA case out and counts it as skipped, never as passed.
// NN_MULTI_DEVICE_TEST_CASE does the same for bodies that need two devices or more (the CUDA
// case is tagged [gpu][multigpu]).
//
//   NN_DEVICE_TEST_CASE("Linear matches hand-computed values", "[Linear]") {
//     nn::Linear linear(2, 3);
//     linear.to(kind.device());                  // `kind`: the device type of this run
//     const Tensor y = linear.forward(kind.on(x));
//     REQUIRE(y.toVector() == ...);
//   }
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn::test {

/// The device type a test body runs on, and its devices.
class DeviceKind {
 public:
  explicit DeviceKind(DeviceType type) : type_(type) {}

  DeviceType type() const { return type_; }
  bool isCpu() const { return type_ == DeviceType::CPU; }
  /// "cpu", "cuda"
  std::string name() const;
  /// Device i of this type: cpu:i or cuda:i.
  Device device(int index = 0) const { return Device(type_, index); }
  /// Devices 0 .. count-1 of this type; fails the test unless there are that many.
  std::vector<Device> devices(int count) const;
  /// How many devices of this type this process can use (64 logical CPU devices).
  int available() const;
  /// A copy of `t` on device(index).
  Tensor on(const Tensor& t, int index = 0) const { return t.to(device(index)); }
  /// The device on which a body runs a module to compare it with a reference module on the
  /// host's cpu:0: cuda:0, or cpu:1 on CPU runs, so that either way the module, its inputs and
  /// its results are moved between two memory domains.
  Device compared() const { return isCpu() ? Device::cpu(1) : device(0); }
  /// A device other than device(0) that every run has, for the errors of a tensor on the wrong
  /// device: cpu:1 on CPU runs, the host's cpu:0 on CUDA runs.
  Device other() const { return isCpu() ? Device::cpu(1) : Device::cpu(0); }
  /// How far a body lets a result lie from the CPU's: not at all on CPU runs, where every
  /// device runs the same kernels, and `cudaBound` on CUDA runs, which the body derives from
  /// how the CUDA kernels differ (sums in other orders, CUDA's own exp, log and tanh). A
  /// comparison with the module on cpu:0 allows this; a reference value that the CPU meets
  /// within t allows t plus this.
  double tolerance(double cudaBound) const { return isCpu() ? 0 : cudaBound; }

 private:
  DeviceType type_;
};

/// `host`'s values on `device` in a non-contiguous tensor: every other float of a tensor with
/// one more dimension, of size 2.
Tensor stridedOn(const Tensor& host, const Device& device);

}  // namespace nn::test

#define NN_DEVICE_TEST_CONCAT_(a, b) a##b
#define NN_DEVICE_TEST_CONCAT(a, b) NN_DEVICE_TEST_CONCAT_(a, b)
#define NN_DEVICE_TEST_BODY NN_DEVICE_TEST_CONCAT(nnDeviceTestBody, __LINE__)

/// A test case whose body runs once on CPU devices and once on CUDA devices; the body sees the
/// device type as `const nn::test::DeviceKind& kind`.
#define NN_DEVICE_TEST_CASE(name, tags)                                                                             \
  static void NN_DEVICE_TEST_BODY(const ::nn::test::DeviceKind& kind);                                              \
  TEST_CASE(name " on cpu", tags) { NN_DEVICE_TEST_BODY(::nn::test::DeviceKind(::nn::DeviceType::CPU)); }           \
  TEST_CASE(name " on cuda", tags "[gpu]") { NN_DEVICE_TEST_BODY(::nn::test::DeviceKind(::nn::DeviceType::CUDA)); } \
  static void NN_DEVICE_TEST_BODY(const ::nn::test::DeviceKind& kind)

/// As NN_DEVICE_TEST_CASE, for bodies that need two devices or more of the type.
#define NN_MULTI_DEVICE_TEST_CASE(name, tags)                                                             \
  static void NN_DEVICE_TEST_BODY(const ::nn::test::DeviceKind& kind);                                    \
  TEST_CASE(name " on cpu", tags) { NN_DEVICE_TEST_BODY(::nn::test::DeviceKind(::nn::DeviceType::CPU)); } \
  TEST_CASE(name " on cuda", tags "[gpu][multigpu]") {                                                    \
    NN_DEVICE_TEST_BODY(::nn::test::DeviceKind(::nn::DeviceType::CUDA));                                  \
  }                                                                                                       \
  static void NN_DEVICE_TEST_BODY(const ::nn::test::DeviceKind& kind)

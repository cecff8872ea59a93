// The CUDA backend on any machine: its installation, the errors for CUDA devices that cannot
// be used (on a machine without a GPU: every cuda:N), and the check macros' messages. The
// tests that need a GPU are in gpu_test.cpp.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "cunn/cuda/Check.h"
#include "cunn/cuda/CudaAllocator.h"
#include "cunn/cuda/CudaBackend.h"
#include "cunn/cuda/DeviceGuard.h"
#include "cunn/cunn.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

int cudaDevices() { return nn::CudaBackend::instance().deviceCount(); }

}  // namespace

TEST_CASE("linking //cunn in the CUDA build installs the CUDA backend in nn", "[CudaBackend]") {
  REQUIRE(nn::findBackend(nn::DeviceType::CUDA) == &nn::CudaBackend::instance());
  REQUIRE(&nn::backendOf(Device::cuda(1)) == &nn::CudaBackend::instance());
  REQUIRE_FALSE(nn::CudaBackend::instance().isHost());
}

TEST_CASE("the CUDA backend's kernels are its own, one table for every CUDA device", "[CudaBackend]") {
  // Looking a table up touches no device, so this runs without a GPU.
  const nn::Kernels& cpu = nn::kernelsOf(Device::cpu(0));
  const nn::Kernels& cuda = nn::kernelsOf(Device::cuda(0));
  REQUIRE(&cuda != &cpu);
  REQUIRE(cuda.elementwise.relu.forward != cpu.elementwise.relu.forward);
  REQUIRE(cuda.elementwise.sgdStep != cpu.elementwise.sgdStep);
  REQUIRE(cuda.tensor.fill != cpu.tensor.fill);
  REQUIRE(&nn::kernelsOf(Device::cuda(1)) == &cuda);
  REQUIRE(cuda.linear.updateOutput != cpu.linear.updateOutput);
}

TEST_CASE("a CUDA device the machine does not have is one clear nn::Error", "[CudaBackend]") {
  const int count = cudaDevices();
  const std::string missing = "cuda:" + std::to_string(count);
  if (count == 0) {
    // No usable GPU: deviceCount() stayed 0 although cudaGetDeviceCount failed, and every
    // way to reach cuda:0 says so with the runtime's reason.
    const std::string reason = nn::CudaBackend::instance().unavailableReason();
    REQUIRE_FALSE(reason.empty());
    const std::string expected = "no CUDA device available for cuda:0: " + reason;
    REQUIRE_THROWS_AS(Device::parse("cuda:0"), nn::Error);
    REQUIRE_THROWS_WITH(Device::parse("cuda:0"), Contains(expected));
    REQUIRE_THROWS_WITH(Tensor::zeros({2}, Device::cuda(0)), Contains(expected));
    REQUIRE_THROWS_WITH(Tensor::fromVector({2}, {1, 2}).to(Device::cuda(0)), Contains(expected));
    REQUIRE_THROWS_WITH(nn::CudaBackend::instance().stream(0), Contains(expected));
  } else {
    REQUIRE_NOTHROW(Device::parse("cuda:0"));
  }
  REQUIRE_THROWS_WITH(Device::parse(missing), Contains(missing));
  REQUIRE_THROWS_WITH(Tensor::zeros({2}, Device::cuda(count)), Contains(missing));
}

TEST_CASE("the runtime's reason names the failed call when no device is usable", "[CudaBackend]") {
  const std::string reason = nn::CudaBackend::instance().unavailableReason();
  if (cudaDevices() > 0) {
    REQUIRE(reason.empty());
  } else {
    // Either the runtime failed (no driver: error 35) or it found no device.
    REQUIRE((reason.find("cudaGetDeviceCount failed: ") == 0 || reason == "the CUDA runtime found no device"));
  }
}

TEST_CASE("DataParallelTable and the communicators refuse missing CUDA devices clearly", "[CudaBackend]") {
  const int count = cudaDevices();
  const Device missing = Device::cuda(count);
  auto table = std::make_shared<nn::DataParallelTable>(0);
  REQUIRE_THROWS_WITH(table->add(std::make_shared<nn::Identity>(), {missing}),
                      Contains("nn.DataParallelTable.add") && Contains(missing.str()));
  for (bool useNCCL : {true, false})
    REQUIRE_THROWS_WITH(nn::makeCommunicator({missing}, useNCCL), Contains(missing.str()));
  REQUIRE_THROWS_WITH(nn::makeCommunicator({Device::cpu(0), missing}, false), Contains("devices of one type"));
}

TEST_CASE("CUDA_CHECK names the call, the file and line and the current device", "[CudaBackend]") {
  // cudaSetDevice(-1) fails everywhere: with no driver (insufficient driver) or with one
  // (invalid device).
  int line = 0;
  std::string message;
  try {
    line = __LINE__, CUDA_CHECK(cudaSetDevice(-1));
  } catch (const nn::Error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Contains("CUDA error on ") && Contains("cudaSetDevice(-1) failed at ") &&
                          Contains("cuda_backend_test.cpp:" + std::to_string(line) + ": "));
  if (cudaDevices() == 0)
    CHECK_THAT(message, Contains("on no current device (cudaErrorInsufficientDriver)") ||
                            Contains("on no current device (cudaErrorNoDevice)"));
  else
    CHECK_THAT(message, Contains("on cuda:0"));
  REQUIRE_NOTHROW(CUDA_CHECK(cudaSuccess));
}

TEST_CASE("cuBLAS, cuDNN and NCCL checks name the call and the library's message", "[CudaBackend]") {
  const auto messageOf = [](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const nn::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string cublas = messageOf([] { CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED); });
  CHECK_THAT(cublas, Contains("cuBLAS error on ") && Contains("CUBLAS_STATUS_NOT_INITIALIZED") &&
                         Contains("cuda_backend_test.cpp:"));
  const std::string cudnn = messageOf([] { CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM); });
  CHECK_THAT(cudnn, Contains("cuDNN error on ") && Contains("CUDNN_STATUS_BAD_PARAM") &&
                        Contains(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)));
  const std::string nccl = messageOf([] { NCCL_CHECK(ncclInvalidArgument); });
  CHECK_THAT(nccl, Contains("NCCL error on ") && Contains("ncclInvalidArgument") &&
                       Contains(ncclGetErrorString(ncclInvalidArgument)));
  REQUIRE_NOTHROW(CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS));
  REQUIRE_NOTHROW(CUDNN_CHECK(CUDNN_STATUS_SUCCESS));
  REQUIRE_NOTHROW(NCCL_CHECK(ncclSuccess));
}

TEST_CASE("DeviceGuard refuses CPU devices and reports a runtime that cannot set a device", "[CudaBackend]") {
  REQUIRE_THROWS_WITH(nn::DeviceGuard(Device::cpu(1)), Contains("DeviceGuard: expected a CUDA device, got cpu:1"));
  if (cudaDevices() == 0) REQUIRE_THROWS_WITH(nn::DeviceGuard(0), Contains("cudaGetDevice(&previous_) failed"));
}

TEST_CASE("CudaAllocator serves requests in whole 512-byte units", "[CudaBackend]") {
  CHECK(nn::CudaAllocator::roundedSize(0) == 512);
  CHECK(nn::CudaAllocator::roundedSize(1) == 512);
  CHECK(nn::CudaAllocator::roundedSize(512) == 512);
  CHECK(nn::CudaAllocator::roundedSize(513) == 1024);
  CHECK(nn::CudaAllocator::roundedSize(4000) == 4096);
}

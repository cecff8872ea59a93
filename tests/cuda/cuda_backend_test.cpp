// The CUDA backend on any machine: its installation, the errors for CUDA devices that cannot
// be used (on a machine without a GPU: every cuda:N), and the check macros' messages; and,
// tagged [gpu] or [gpu][multigpu], what only the CUDA backend has: its allocator's cache (no
// cudaMalloc in a steady loop), the current device of each device's thread, copies through
// host memory and event ordering between two GPUs, the peer communicator's buffer, the NCCL
// communicators' pool, the convolutions' unfolded route and the watches of host waits. What
// every backend does is tested on CUDA devices by the bodies of backend_test.cpp and of each
// module's test.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cunn/cunn.h"
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaAllocator.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/HostWait.h"
#include "nn/cuda/NcclCommunicator.h"
#include "nn/cuda/PeerCommunicator.h"
#include "nn/cuda/UnfoldedConvolution.h"
#include "tests/support/GradCheck.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

nn::CudaBackend& backend() { return nn::CudaBackend::instance(); }

int cudaDevices() { return backend().deviceCount(); }

// Every CUDA device of the machine, up to 8.
std::vector<Device> allCudaDevices() {
  std::vector<Device> devices;
  for (int i = 0; i < std::min(cudaDevices(), 8); ++i) devices.push_back(Device::cuda(i));
  return devices;
}

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
  REQUIRE(cuda.elementwise.activations[0].forward != cpu.elementwise.activations[0].forward);
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

TEST_CASE("a steady loop of CUDA tensors makes no cudaMalloc", "[gpu]") {
  nn::CudaAllocator& allocator = backend().allocator(0);
  const Device gpu = Device::cuda(0);
  const Tensor host = nn::test::randomTensor({64, 33}, 2);
  // One step's temporaries, made, used and freed, as in a training step.
  const auto step = [&] {
    Tensor a = host.to(gpu);
    Tensor b = Tensor::zeros({1000}, gpu);
    Tensor c = Tensor::empty({64, 33}, gpu);
    c.copy_(a);
    return c.toVector();
  };
  step();
  const int64_t mallocs = allocator.mallocCount();
  for (int i = 0; i < 100; ++i) REQUIRE(step() == host.toVector());
  REQUIRE(allocator.mallocCount() == mallocs);
}

TEST_CASE("steady convolution and pooling steps on CUDA make no cudaMalloc", "[gpu]") {
  const Device gpu = Device::cuda(0);
  nn::CudaAllocator& allocator = backend().allocator(0);
  nn::manualSeed(3);
  nn::SpatialConvolution conv(3, 4, 3, 3, 1, 1, 1, 1);
  nn::SpatialMaxPooling maxPool(2, 2);
  nn::SpatialAveragePooling avgPool(3, 3, 2, 2, 1, 1);
  conv.to(gpu);
  const Tensor x = nn::test::randomTensor({5, 3, 12, 12}, 41).to(gpu);
  const Tensor g = nn::test::randomTensor({5, 4, 6, 6}, 42).to(gpu);
  const auto step = [&] {
    const Tensor& y = conv.forward(x);
    const Tensor& pooled = maxPool.forward(y);
    avgPool.forward(y);
    conv.backward(x, maxPool.backward(y, g));
    avgPool.backward(y, avgPool.output);
    return pooled.toVector();
  };
  const std::vector<float> first = step();
  const int64_t mallocs = allocator.mallocCount();
  for (int i = 0; i < 5; ++i) {
    conv.zeroGradParameters();
    REQUIRE(step() == first);  // deterministic algorithms: the same forward every time
  }
  REQUIRE(allocator.mallocCount() == mallocs);
}

TEST_CASE("CudaAllocator reuses a freed block for a request of a fitting size", "[gpu]") {
  nn::CudaAllocator allocator(0);
  void* first = allocator.allocate(1000);  // served with 1024 bytes
  REQUIRE(allocator.mallocCount() == 1);
  REQUIRE(allocator.bytesInUse() == 1024);
  allocator.deallocate(first);
  REQUIRE(allocator.bytesInUse() == 0);
  REQUIRE(allocator.bytesCached() == 1024);
  REQUIRE(allocator.allocate(900) == first);
  REQUIRE(allocator.mallocCount() == 1);

  void* second = allocator.allocate(600);  // 1024 again, but the cached one is in use
  REQUIRE(second != first);
  REQUIRE(allocator.mallocCount() == 2);
  allocator.deallocate(first);
  allocator.deallocate(second);

  // A cached block of twice the request or more is not given to it.
  void* small = allocator.allocate(100);  // 512 bytes; the cached blocks have 1024
  REQUIRE(allocator.mallocCount() == 3);
  void* big = allocator.allocate(size_t{1} << 20);
  allocator.deallocate(big);
  REQUIRE(allocator.allocate((size_t{1} << 19) + 1) == big);  // 525312 bytes: the 1 MiB block fits
  REQUIRE(allocator.mallocCount() == 4);

  // A pointer it never gave out is reported, not freed and not a crash.
  allocator.deallocate(reinterpret_cast<void*>(uintptr_t{0x10}));
  allocator.deallocate(big);
  allocator.deallocate(small);
  REQUIRE(allocator.bytesInUse() == 0);
  allocator.releaseCache();
  REQUIRE(allocator.bytesCached() == 0);
  allocator.deallocate(allocator.allocate(1000));
  REQUIRE(allocator.mallocCount() == 5);
}

TEST_CASE("the thread of each CUDA device runs its tasks with that device current", "[gpu]") {
  const std::vector<Device> devices = allCudaDevices();
  nn::DeviceThreads threads(devices);
  std::vector<int> current(devices.size(), -1);
  std::vector<cudaError_t> status(devices.size(), cudaErrorUnknown);
  // Catch2's assertions are for the test's thread: the workers only record.
  threads.runAll([&](size_t i) { status[i] = cudaGetDevice(&current[i]); });
  for (size_t i = 0; i < devices.size(); ++i) {
    REQUIRE(status[i] == cudaSuccess);
    REQUIRE(current[i] == devices[i].index());
  }
}

TEST_CASE("copies between two CUDA devices through host memory keep every value", "[gpu][multigpu]") {
  const Device a = Device::cuda(0), b = Device::cuda(1);
  INFO("peer access between cuda:0 and cuda:1: " << backend().peerAccess(0, 1));
  // 12 MB: more than one chunk of the 8 MB staging buffer. The staged path, whatever the
  // hardware allows (backend_test.cpp copies by the path the backend picks).
  const Tensor host = nn::test::randomTensor({3 << 20}, 3);
  const Tensor onA = host.to(a);
  Tensor staged = Tensor::empty({3 << 20}, b);
  backend().copyThroughHost(staged.rawData(), 1, onA.rawData(), 0, host.numel() * sizeof(float));
  REQUIRE(staged.toVector() == host.toVector());
}

TEST_CASE("copies between CUDA devices are ordered by events with the work on both devices", "[gpu][multigpu]") {
  // A chain of queued work across two devices with no host wait until the end: each copy must
  // wait for the kernel before it on its source and the one after it must wait for the copy.
  // 48 MB, so that a copy or kernel out of order would be caught midway.
  const int64_t n = int64_t{12} << 20;
  Tensor onA = Tensor::empty({n}, Device::cuda(0));
  Tensor onB = Tensor::empty({n}, Device::cuda(1));
  for (int round = 1; round <= 5; ++round) {
    onA.fill_(1.f);  // queued on cuda:0
    onB.copy_(onA);  // after the fill
    onB.mul_(3.f);   // after the copy, on cuda:1
    onA.fill_(0.f);  // on cuda:0 again, before the copy back, which must overwrite it
    onA.copy_(onB);
    onA.add_(onA);  // after the copy back: 6 everywhere
    const std::vector<float> v = onA.toVector();
    INFO("round " << round);
    REQUIRE(std::count(v.begin(), v.end(), 6.f) == n);
  }
}

TEST_CASE("PeerCommunicator sums on the first device's buffer, made once", "[gpu][multigpu]") {
  // Its sums are compared with the host's in backend_test.cpp; here its buffer: a second
  // allReduce, as a training step would make, takes no new memory.
  const std::vector<Device> devices = allCudaDevices();
  nn::PeerCommunicator communicator(devices);
  REQUIRE(communicator.name() == "peer copies");
  std::vector<Tensor> t;
  for (size_t r = 0; r < devices.size(); ++r) t.push_back(nn::test::randomTensor({129, 7}, 100 + r).to(devices[r]));
  communicator.allReduce(t);
  const int64_t mallocs = backend().allocator(0).mallocCount();
  communicator.allReduce(t);
  REQUIRE(backend().allocator(0).mallocCount() == mallocs);
}

TEST_CASE("NcclCommunicator gives its NCCL communicators back for the next one over the same devices", "[gpu]") {
  // One device is enough for the pool: NCCL makes a set of one communicator there.
  const std::vector<Device> one{Device::cuda(0)};
  const Tensor values = nn::test::randomTensor({33}, 7);
  int64_t made = 0;
  {
    nn::NcclCommunicator first(one);
    made = nn::NcclCommunicator::setsMade();
    std::vector<Tensor> t{values.to(one[0])};
    first.allReduce(t);
    REQUIRE(t[0].toVector() == values.toVector());
    // Held by `first`: a second communicator at the same time makes a set of its own.
    nn::NcclCommunicator second(one);
    REQUIRE(nn::NcclCommunicator::setsMade() == made + 1);
  }
  // Both sets are back in the pool: the next two take them and make none.
  nn::NcclCommunicator third(one);
  nn::NcclCommunicator fourth(one);
  REQUIRE(nn::NcclCommunicator::setsMade() == made + 1);
  std::vector<Tensor> t{values.to(one[0])};
  fourth.broadcast(t);
  third.allReduce(t);
  REQUIRE(t[0].toVector() == values.toVector());
}

namespace {

// Forces the unfolded route on plans made while it lives (nn/cuda/UnfoldedConvolution.h).
struct ForcedUnfolded {
  ForcedUnfolded() { nn::cuda::forceUnfoldedConvolutions(true); }
  ~ForcedUnfolded() { nn::cuda::forceUnfoldedConvolutions(false); }
};

}  // namespace

TEST_CASE("a convolution's direction without a deterministic cuDNN algorithm takes the unfolded route", "[gpu]") {
  // cuDNN offers deterministic algorithms for every shape a test can name, so the route is
  // forced; each module's three passes must run there, give the host's results within float
  // rounding and agree with finite differences.
  const ForcedUnfolded forced;
  nn::manualSeed(21);
  const Tensor host = nn::test::randomTensor({2, 3, 7, 6}, 22);
  const std::vector<nn::ModulePtr> modules{std::make_shared<nn::SpatialConvolution>(3, 4, 3, 3, 2, 2, 1, 1),
                                           std::make_shared<nn::SpatialDilatedConvolution>(3, 2, 3, 2, 1, 2, 1, 0, 2, 3),
                                           std::make_shared<nn::SpatialFullConvolution>(3, 2, 3, 2, 2, 3, 1, 0, 1, 2)};
  for (const nn::ModulePtr& reference : modules) {
    CAPTURE(reference->toString());
    const nn::ModulePtr tested = reference->clone();
    const Tensor y = reference->forward(host).clone();
    const Tensor hostGrad = nn::test::randomTensor(y.sizes(), 23);
    reference->zeroGradParameters();
    const Tensor gi = reference->backward(host, hostGrad).clone();
    tested->to(Device::cuda(0));
    tested->zeroGradParameters();
    const int64_t passes = nn::cuda::unfoldedConvolutionPasses();
    const Tensor x = host.to(Device::cuda(0));
    REQUIRE(nn::test::maxAbsDiff(tested->forward(x), y) <= 1e-5);
    REQUIRE(nn::test::maxAbsDiff(tested->backward(x, hostGrad.to(Device::cuda(0))), gi) <= 1e-5);
    REQUIRE(nn::test::maxAbsDiff(tested->getParameters().second, reference->getParameters().second) <= 1e-4);
    REQUIRE(nn::cuda::unfoldedConvolutionPasses() == passes + 3);
    REQUIRE_THAT(nn::test::checkInputGradient(*tested, nn::test::randomTensor({1, 3, 5, 6}, 24).to(Device::cuda(0))),
                 nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(*tested, nn::test::randomTensor({1, 3, 5, 6}, 24).to(Device::cuda(0))),
                 nn::test::EachAgreesWithin(1e-3, 2));
  }
}

TEST_CASE("a wait for a device runs the live watches while it waits, and throws what a watch throws", "[gpu]") {
  // A host function on the stream holds it for 30 ms, as a collective whose peer is slow would.
  const cudaHostFn_t hold = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(30)); };
  cudaStream_t stream = backend().stream(0);
  int checks = 0;
  {
    const nn::cuda::WaitWatch watch([&] { ++checks; });
    CUDA_CHECK(cudaLaunchHostFunc(stream, hold, nullptr));
    backend().synchronize(0);
    REQUIRE(checks >= 5);  // about one a millisecond
    CUDA_CHECK(cudaLaunchHostFunc(stream, hold, nullptr));
    {
      const nn::cuda::WaitWatch failing([] { throw nn::Error("the collective's deadline passed"); });
      REQUIRE_THROWS_WITH(backend().synchronize(0), "the collective's deadline passed");
    }
    backend().synchronize(0);
  }
  // Without a watch the wait blocks in the runtime: nothing runs the checks.
  checks = 0;
  CUDA_CHECK(cudaLaunchHostFunc(stream, hold, nullptr));
  backend().synchronize(0);
  REQUIRE(checks == 0);
}

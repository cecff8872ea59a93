// Tests that need CUDA devices: tagged [gpu] (one device) or [gpu][multigpu] (two or more).
// Where the machine has fewer, tests/main.cpp leaves them out of the run and counts them
// as skipped, saying why; none of them is reported as passed without a GPU running it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "cunn/cuda/CudaAllocator.h"
#include "cunn/cuda/CudaBackend.h"
#include "cunn/cuda/NcclCommunicator.h"
#include "cunn/cuda/PeerCommunicator.h"
#include "cunn/cunn.h"
#include "tests/FormulaProbe.h"
#include "tests/GradCheck.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

nn::CudaBackend& backend() { return nn::CudaBackend::instance(); }

// Every CUDA device of the machine, up to 8.
std::vector<Device> allCudaDevices() {
  std::vector<Device> devices;
  for (int i = 0; i < std::min(backend().deviceCount(), 8); ++i) devices.push_back(Device::cuda(i));
  return devices;
}

// One random host tensor per rank, each from its own seed.
std::vector<Tensor> hostRanks(size_t ranks, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> out;
  for (size_t r = 0; r < ranks; ++r) out.push_back(nn::test::randomTensor(sizes, 100 + r));
  return out;
}

std::vector<Tensor> onDevices(const std::vector<Tensor>& host, const std::vector<Device>& devices) {
  std::vector<Tensor> out;
  for (size_t r = 0; r < host.size(); ++r) out.push_back(host[r].to(devices[r]));
  return out;
}

// The sum over ranks, added in rank order as HostCommunicator adds.
std::vector<float> hostSum(const std::vector<Tensor>& host) {
  std::vector<float> sum = host[0].toVector();
  for (size_t r = 1; r < host.size(); ++r) {
    const std::vector<float> v = host[r].toVector();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
  }
  return sum;
}

double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("CUDA tensors go to the device and back unchanged", "[gpu]") {
  const Device gpu = Device::parse("cuda:0");
  const Tensor host = nn::test::randomTensor({3, 5, 7}, 1);
  const Tensor onGpu = host.to(gpu);
  REQUIRE(onGpu.device() == gpu);
  REQUIRE(onGpu.rawData() != nullptr);
  REQUIRE_THROWS_WITH(onGpu.data(), Contains("data() is for CPU tensors"));
  REQUIRE(onGpu.toVector() == host.toVector());

  // Within the device, and from a strided host tensor.
  const Tensor copy = onGpu.clone();
  REQUIRE(copy.rawData() != onGpu.rawData());
  REQUIRE(copy.toVector() == host.toVector());
  const Tensor transposed = host.transpose(0, 2);
  Tensor target = Tensor::empty({7, 5, 3}, gpu);
  target.copy_(transposed);
  REQUIRE(target.toVector() == transposed.contiguous().toVector());

  // And from a strided CUDA tensor, within the device.
  REQUIRE(onGpu.transpose(0, 2).contiguous().toVector() == transposed.contiguous().toVector());
}

TEST_CASE("fill on a CUDA device sets every element, beyond one grid of blocks", "[gpu]") {
  // The kernel's grid covers 4096 blocks x 256 threads = 2^20 floats a pass; more takes
  // its grid-stride loop.
  const int64_t n = 3 * (int64_t{1} << 20) + 5;
  Tensor t = Tensor::full({n}, 2.5f, Device::cuda(0));
  std::vector<float> v = t.toVector();
  REQUIRE(std::count(v.begin(), v.end(), 2.5f) == n);
  t.narrow(0, 1, 3).fill_(-1.f);
  v = t.toVector();
  REQUIRE(std::vector<float>(v.begin(), v.begin() + 5) == std::vector<float>{2.5f, -1.f, -1.f, -1.f, 2.5f});
  REQUIRE(std::count(v.begin(), v.end(), 2.5f) == n - 3);
}

TEST_CASE("fill on a strided CUDA tensor sets only its elements", "[gpu]") {
  // Column 1 of a 4x3 matrix: elements 1, 4, 7, 10 of the storage.
  Tensor t = Tensor::zeros({4, 3}, Device::cuda(0));
  t.select(1, 1).fill_(7.f);
  REQUIRE(t.toVector() == std::vector<float>{0, 7, 0, 0, 7, 0, 0, 7, 0, 0, 7, 0});
  // A transposed view: every element, in another order.
  t.transpose(0, 1).fill_(-2.f);
  REQUIRE(t.toVector() == std::vector<float>(12, -2.f));
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

TEST_CASE("the nn/math formulas give the CPU's floats on the GPU", "[gpu]") {
  const std::vector<float> in = nn::test::probeInputs(4096, 23);
  const int64_t count = static_cast<int64_t>(in.size()) / nn::test::kProbeInputs;
  std::vector<float> cpu(count * nn::test::kProbeOutputs);
  for (int64_t i = 0; i < count; ++i)
    nn::test::probeSample(in.data() + i * nn::test::kProbeInputs, cpu.data() + i * nn::test::kProbeOutputs);

  const Device gpu = Device::cuda(0);
  const Tensor inGpu = Tensor::fromVector({static_cast<int64_t>(in.size())}, in, gpu);
  const Tensor outGpu = Tensor::empty({static_cast<int64_t>(cpu.size())}, gpu);
  nn::test::probeFormulasDevice(inGpu.rawData(), count, outGpu.rawData(), backend().stream(0));
  const std::vector<float> device = outGpu.toVector();

  // Plain arithmetic, sqrt and division round the same on both (no fused multiply-add on
  // either side, IEEE division and sqrt on the GPU): equal bit for bit. exp, log and tanh are
  // CUDA's own on the GPU, within 2 ulp of the correctly rounded value; a subtraction after
  // them (g - exp(y) * sum) can leave that error large against a small result, hence a bound
  // relative to max(1, |value|), the inputs being at most 8 in size.
  int64_t differing = 0;
  for (int64_t i = 0; i < count; ++i)
    for (int k = 0; k < nn::test::kProbeOutputs; ++k) {
      const size_t at = i * nn::test::kProbeOutputs + k;
      const float c = cpu[at], g = device[at];
      const bool same = nn::test::probeIsTranscendental(k)
                            ? (c == g || std::fabs(double(c) - g) <= 1e-5 * std::max(1.0, std::fabs(double(c))))
                            : std::memcmp(&c, &g, sizeof(float)) == 0;
      if (same || ++differing > 5) continue;
      INFO("sample " << i << ", output " << k << ": CPU " << c << ", GPU " << g);
      CHECK(same);
    }
  REQUIRE(differing == 0);
}

TEST_CASE("ReLU, Tanh and Sigmoid on CUDA give the CPU module's floats", "[gpu]") {
  const Device gpu = Device::cuda(0);
  // Odd sizes: more elements than one grid of blocks covers, and a single element.
  for (int64_t n : {int64_t{1}, int64_t{1} << 21 | 7}) {
    CAPTURE(n);
    const Tensor x = nn::test::randomTensor({n}, 31, -4, 4);
    const Tensor g = nn::test::randomTensor({n}, 32);
    std::vector<std::pair<std::shared_ptr<nn::Module>, std::shared_ptr<nn::Module>>> pairs{
        {std::make_shared<nn::ReLU>(), std::make_shared<nn::ReLU>()},
        {std::make_shared<nn::ReLU>(true), std::make_shared<nn::ReLU>(true)},
        {std::make_shared<nn::Tanh>(), std::make_shared<nn::Tanh>()},
        {std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Sigmoid>()}};
    for (auto& [cpuModule, gpuModule] : pairs) {
      CAPTURE(cpuModule->toString());
      Tensor xCpu = x.clone(), gCpu = g.clone();
      Tensor xGpu = x.to(gpu), gGpu = g.to(gpu);
      const std::vector<float> yCpu = cpuModule->forward(xCpu).toVector();
      const Tensor& yGpu = gpuModule->forward(xGpu);
      REQUIRE(yGpu.device() == gpu);
      const std::vector<float> giCpu = cpuModule->backward(xCpu, gCpu).toVector();
      const std::vector<float> giGpu = gpuModule->backward(xGpu, gGpu).toVector();
      // ReLU is a comparison and a copy: equal bit for bit. tanh and exp are CUDA's own on
      // the GPU, within 2 ulp; the products after them stay within a few more.
      const double tolerance = cpuModule->typeName() == "nn.ReLU" ? 0.0 : 1e-6;
      REQUIRE(maxAbsDiff(yGpu.toVector(), yCpu) <= tolerance);
      REQUIRE(maxAbsDiff(giGpu, giCpu) <= tolerance);
    }
  }
}

TEST_CASE("Linear on CUDA gives the CPU module's output and gradients", "[gpu]") {
  const Device gpu = Device::cuda(0);
  // Odd sizes, a 3-D input (the batch is every dimension but the last), with and without bias.
  for (bool withBias : {true, false}) {
    CAPTURE(withBias);
    nn::manualSeed(5);
    auto cpuLinear = std::make_shared<nn::Linear>(37, 23, withBias);
    auto gpuLinear = std::dynamic_pointer_cast<nn::Linear>(cpuLinear->clone());
    gpuLinear->to(gpu);
    const Tensor x = nn::test::randomTensor({3, 19, 37}, 51);
    const Tensor g = nn::test::randomTensor({3, 19, 23}, 52);
    const Tensor xGpu = x.to(gpu), gGpu = g.to(gpu);
    const std::vector<float> yCpu = cpuLinear->forward(x).toVector();
    const std::vector<float> yGpu = gpuLinear->forward(xGpu).toVector();
    cpuLinear->zeroGradParameters();
    gpuLinear->zeroGradParameters();
    const std::vector<float> giCpu = cpuLinear->backward(x, g, 0.5f).toVector();
    const std::vector<float> giGpu = gpuLinear->backward(xGpu, gGpu, 0.5f).toVector();
    // cuBLAS adds the products of a dot product in another order than OpenBLAS: sums of at
    // most 57 products of numbers below 1, so a few ulp of their size.
    REQUIRE(maxAbsDiff(yGpu, yCpu) < 1e-5);
    REQUIRE(maxAbsDiff(giGpu, giCpu) < 1e-5);
    auto [cpuValues, cpuGradients] = cpuLinear->parameters();
    auto [gpuValues, gpuGradients] = gpuLinear->parameters();
    REQUIRE(gpuGradients.size() == cpuGradients.size());
    for (size_t p = 0; p < cpuGradients.size(); ++p)
      REQUIRE(maxAbsDiff(gpuGradients[p].toVector(), cpuGradients[p].toVector()) < 1e-5);
  }
}

TEST_CASE("an SGD step on CUDA gives the CPU's parameters bit for bit", "[gpu]") {
  const Device gpu = Device::cuda(0);
  const int64_t n = (int64_t{1} << 20) + 3;
  for (bool nesterov : {false, true}) {
    nn::SgdOptions options;
    options.learningRate = 0.1f;
    options.momentum = 0.9f;
    options.dampening = 0.f;
    options.weightDecay = 5e-4f;
    options.nesterov = nesterov;
    options.learningRateDecay = 1e-3f;
    Tensor xCpu = nn::test::randomTensor({n}, 41), gCpu = nn::test::randomTensor({n}, 42);
    Tensor xGpu = xCpu.to(gpu), gGpu = gCpu.to(gpu);
    nn::SGD onCpu({xCpu, gCpu}, options);
    nn::SGD onGpu({xGpu, gGpu}, options);
    // Three steps: the first sets the velocity, the later ones read it.
    for (int step = 0; step < 3; ++step) {
      onCpu.step();
      onGpu.step();
    }
    REQUIRE(xGpu.toVector() == xCpu.toVector());
  }
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

TEST_CASE("copies between two CUDA devices, peer to peer and through host memory", "[gpu][multigpu]") {
  const Device a = Device::cuda(0), b = Device::cuda(1);
  INFO("peer access between cuda:0 and cuda:1: " << backend().peerAccess(0, 1));
  // 12 MB: more than one chunk of the 8 MB staging buffer.
  const Tensor host = nn::test::randomTensor({3 << 20}, 3);
  const Tensor onA = host.to(a);
  const Tensor onB = onA.to(b);
  REQUIRE(onB.device() == b);
  REQUIRE(onB.toVector() == host.toVector());
  REQUIRE(onB.to(a).toVector() == host.toVector());

  // The staged path, whatever the hardware allows.
  Tensor staged = Tensor::empty({3 << 20}, b);
  backend().copyThroughHost(staged.rawData(), 1, onA.rawData(), 0, host.numel() * sizeof(float));
  REQUIRE(staged.toVector() == host.toVector());

  // A copy lands after the work queued on the destination: a fill just before it does not
  // overwrite it.
  Tensor target = Tensor::full({3 << 20}, 7.f, b);
  target.copy_(onA);
  REQUIRE(target.toVector() == host.toVector());
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

TEST_CASE("PeerCommunicator gives the host's sums exactly", "[gpu][multigpu]") {
  const std::vector<Device> devices = allCudaDevices();
  nn::PeerCommunicator communicator(devices);
  REQUIRE(communicator.name() == "peer copies");
  const std::vector<Tensor> host = hostRanks(devices.size(), {129, 7});
  const std::vector<float> sum = hostSum(host);

  std::vector<Tensor> t = onDevices(host, devices);
  communicator.reduce(t);
  // The same float additions in the same order as on the host: equal bit for bit.
  REQUIRE(t[0].toVector() == sum);
  for (size_t r = 1; r < t.size(); ++r) REQUIRE(t[r].toVector() == host[r].toVector());
  communicator.broadcast(t);
  for (const Tensor& x : t) REQUIRE(x.toVector() == sum);

  t = onDevices(host, devices);
  communicator.allReduce(t);
  const int64_t mallocs = backend().allocator(0).mallocCount();
  for (const Tensor& x : t) REQUIRE(x.toVector() == sum);
  // Once more, as a training step would: the buffer on the first device is reused.
  t = onDevices(host, devices);
  communicator.allReduce(t);
  REQUIRE(backend().allocator(0).mallocCount() == mallocs);

  std::vector<Tensor> swapped = t;
  std::swap(swapped[0], swapped[1]);
  REQUIRE_THROWS_WITH(communicator.reduce(swapped), Contains("PeerCommunicator.reduce: expected tensor 0 on cuda:0"));
}

TEST_CASE("NcclCommunicator gives the host's sums", "[gpu][multigpu]") {
  const std::vector<Device> devices = allCudaDevices();
  nn::NcclCommunicator communicator(devices);
  REQUIRE(communicator.name() == "nccl");
  const std::vector<Tensor> host = hostRanks(devices.size(), {1000, 3});
  const std::vector<float> sum = hostSum(host);
  // NCCL adds in an order of its own: a few roundings of values below 8 apart.
  const double tolerance = 1e-5;

  std::vector<Tensor> t = onDevices(host, devices);
  communicator.reduce(t);
  REQUIRE(maxAbsDiff(t[0].toVector(), sum) < tolerance);
  for (size_t r = 1; r < t.size(); ++r) REQUIRE(t[r].toVector() == host[r].toVector());
  communicator.broadcast(t);
  const std::vector<float> root = t[0].toVector();
  for (const Tensor& x : t) REQUIRE(x.toVector() == root);

  t = onDevices(host, devices);
  communicator.allReduce(t);
  for (const Tensor& x : t) REQUIRE(maxAbsDiff(x.toVector(), sum) < tolerance);

  REQUIRE_THROWS_WITH(communicator.allReduce({t[0]}), Contains("NcclCommunicator.allReduce: expected one tensor per"));
}

TEST_CASE("makeCommunicator picks NCCL for CUDA devices when asked, else peer copies", "[gpu]") {
  const std::vector<Device> one = {Device::cuda(0)};
  REQUIRE(nn::makeCommunicator(one, false)->name() == "peer copies");
  const auto nccl = nn::makeCommunicator(one, true);
  REQUIRE(nccl->name() == "nccl");
  // One rank: every collective leaves the tensor as it was.
  const Tensor host = nn::test::randomTensor({17}, 4);
  const std::vector<Tensor> t = {host.to(Device::cuda(0))};
  nccl->allReduce(t);
  REQUIRE(t[0].toVector() == host.toVector());
}

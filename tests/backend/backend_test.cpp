// What every backend does for a tensor, one body for each device type (tests/support/DeviceTest.h):
// transfers to a device and back, fills, strided copies and element-wise arithmetic, copies
// between two devices, the SGD step, the thread of each device, and the communicators made by
// nn::makeCommunicator. What only the CUDA backend has (its allocator's cache, peer access,
// copies through host memory, event ordering between GPUs) is in cuda_backend_test.cpp.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cunn/cunn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

// One random host tensor per rank, each from its own seed.
std::vector<Tensor> hostRanks(size_t ranks, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> out;
  for (size_t r = 0; r < ranks; ++r) out.push_back(nn::test::randomTensor(sizes, 100 + r));
  return out;
}

// A copy of each rank's tensor on its device (a copy on cpu:0 too, where to() would give the
// host tensor itself for the collectives to overwrite).
std::vector<Tensor> onDevices(const std::vector<Tensor>& host, const std::vector<Device>& devices) {
  std::vector<Tensor> out;
  for (size_t r = 0; r < host.size(); ++r) out.push_back(Tensor::empty(host[r].sizes(), devices[r]).copy_(host[r]));
  return out;
}

// The sum over ranks, added in rank order as HostCommunicator and PeerCommunicator add.
std::vector<float> hostSum(const std::vector<Tensor>& host) {
  std::vector<float> sum = host[0].toVector();
  for (size_t r = 1; r < host.size(); ++r) {
    const std::vector<float> v = host[r].toVector();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
  }
  return sum;
}

// Up to 8 devices of the body's type: 8 logical CPU devices, or every CUDA device up to 8.
std::vector<Device> upToEight(const nn::test::DeviceKind& kind) { return kind.devices(std::min(kind.available(), 8)); }

}  // namespace

NN_DEVICE_TEST_CASE("tensors go to a device and back unchanged", "[Backend]") {
  const Device device = kind.compared();
  const Tensor host = nn::test::randomTensor({3, 5, 7}, 1);
  const Tensor onDevice = host.to(device);
  REQUIRE(onDevice.device() == device);
  REQUIRE(onDevice.rawData() != nullptr);
  REQUIRE(onDevice.rawData() != host.rawData());
  // data() is a host pointer, for CPU tensors only.
  if (device.isCpu())
    REQUIRE(onDevice.data() == onDevice.rawData());
  else
    REQUIRE_THROWS_WITH(onDevice.data(), Contains("data() is for CPU tensors"));
  REQUIRE(onDevice.toVector() == host.toVector());

  // Within the device, and from a strided host tensor.
  const Tensor copy = onDevice.clone();
  REQUIRE(copy.device() == device);
  REQUIRE(copy.rawData() != onDevice.rawData());
  REQUIRE(copy.toVector() == host.toVector());
  const Tensor transposed = host.transpose(0, 2);
  Tensor target = Tensor::empty({7, 5, 3}, device);
  target.copy_(transposed);
  REQUIRE(target.toVector() == transposed.contiguous().toVector());

  // And from a strided tensor of the device, within the device.
  REQUIRE(onDevice.transpose(0, 2).contiguous().toVector() == transposed.contiguous().toVector());
}

TEST_CASE("CPU storage starts on a 64-byte boundary, from 2 MB on on a 2 MB one, and holds every element",
          "[Backend]") {
  // Note [Huge pages] in nn/cpu/CpuBackend.cpp.
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  for (const int64_t elements :
       {int64_t{1}, int64_t{1000}, int64_t{kHuge / 4 - 1}, int64_t{kHuge / 4}, int64_t{3 * kHuge / 4 + 5}}) {
    for (const Device device : {Device::cpu(0), Device::cpu(1)}) {
      Tensor t = Tensor::empty({elements}, device);
      const auto address = reinterpret_cast<uintptr_t>(t.rawData());
      INFO(elements << " floats on " << device.str());
      REQUIRE(address % 64 == 0);
      if (elements * 4 >= static_cast<int64_t>(kHuge)) REQUIRE(address % kHuge == 0);
      t.fill_(0.5f);
      t.narrow(0, elements - 1, 1).fill_(2.f);
      const std::vector<float> values = t.toVector();
      REQUIRE(values.back() == 2.f);
      REQUIRE(std::count(values.begin(), values.end(), 0.5f) == elements - 1);
    }
  }
}

NN_DEVICE_TEST_CASE("fill sets every element, beyond one grid of CUDA blocks", "[Backend]") {
  // The CUDA kernel's grid covers 4096 blocks x 256 threads = 2^20 floats a pass; more takes
  // its grid-stride loop.
  const int64_t n = 3 * (int64_t{1} << 20) + 5;
  Tensor t = Tensor::full({n}, 2.5f, kind.device());
  std::vector<float> v = t.toVector();
  REQUIRE(std::count(v.begin(), v.end(), 2.5f) == n);
  t.narrow(0, 1, 3).fill_(-1.f);
  v = t.toVector();
  REQUIRE(std::vector<float>(v.begin(), v.begin() + 5) == std::vector<float>{2.5f, -1.f, -1.f, -1.f, 2.5f});
  REQUIRE(std::count(v.begin(), v.end(), 2.5f) == n - 3);
}

NN_DEVICE_TEST_CASE("fill on a strided tensor sets only its elements", "[Backend]") {
  // Column 1 of a 4x3 matrix: elements 1, 4, 7, 10 of the storage.
  Tensor t = Tensor::zeros({4, 3}, kind.device());
  t.select(1, 1).fill_(7.f);
  REQUIRE(t.toVector() == std::vector<float>{0, 7, 0, 0, 7, 0, 0, 7, 0, 0, 7, 0});
  // A transposed view: every element, in another order.
  t.transpose(0, 1).fill_(-2.f);
  REQUIRE(t.toVector() == std::vector<float>(12, -2.f));
}

NN_DEVICE_TEST_CASE("strided copies, add_, mul_ and cmul_ on a device give the host's floats", "[Backend]") {
  const Device device = kind.compared();
  const Tensor host = nn::test::randomTensor({5, 7, 3}, 61);
  const Tensor other = nn::test::randomTensor({5, 7, 3}, 62);

  // Strided to contiguous, contiguous to strided, strided to strided, within the device; a
  // transpose, whose strides do not decrease.
  const Tensor strided = host.transpose(0, 2).contiguous().to(device).transpose(0, 2);
  REQUIRE(strided.toVector() == host.toVector());
  REQUIRE(strided.contiguous().toVector() == host.toVector());
  Tensor target = Tensor::empty({3, 7, 5}, device).transpose(0, 2);
  target.copy_(host.to(device));
  REQUIRE(target.toVector() == host.toVector());
  Tensor narrowed = Tensor::zeros({5, 9, 3}, device);
  narrowed.narrow(1, 1, 7).copy_(strided);
  REQUIRE(narrowed.narrow(1, 1, 7).toVector() == host.toVector());
  REQUIRE(narrowed.select(1, 0).toVector() == std::vector<float>(15, 0.f));
  // Between the device and the host, with the strided side on the device.
  Tensor back = Tensor::empty({3, 7, 5}).transpose(0, 2);
  back.copy_(strided);
  REQUIRE(back.toVector() == host.toVector());

  // The arithmetic: one IEEE operation per element on every device, equal bit for bit.
  Tensor a = host.clone(), aOn = host.to(device);
  const Tensor o = other.to(device);
  a.add_(other, -0.3f);
  aOn.add_(o, -0.3f);
  REQUIRE(aOn.toVector() == a.toVector());
  a.mul_(1.7f);
  aOn.mul_(1.7f);
  REQUIRE(aOn.toVector() == a.toVector());
  a.cmul_(other);
  aOn.cmul_(o);
  REQUIRE(aOn.toVector() == a.toVector());
  REQUIRE_THROWS_WITH(aOn.add_(strided), Contains("nn.Tensor.add_: needs contiguous tensors"));
}

NN_DEVICE_TEST_CASE("copies between overlapping views of one tensor read the whole source first", "[Backend]") {
  // Note [Overlapping copies] in nn/tensor/Tensor.cpp: the expected values are those of a copy from a
  // separate tensor holding the source's values, worked out on the host from counting values.
  const Device device = kind.compared();
  std::vector<float> counting(24);
  for (size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<float>(i);
  const Tensor start = Tensor::fromVector({24}, counting);
  const auto shifted = [&](int64_t to, int64_t from, int64_t length) {
    std::vector<float> v = counting;
    for (int64_t k = 0; k < length; ++k) v[static_cast<size_t>(to + k)] = counting[static_cast<size_t>(from + k)];
    return v;
  };
  SECTION("contiguous, forward and backward along the storage") {
    const std::vector<std::pair<int64_t, int64_t>> moves{{1, 0}, {0, 1}, {3, 0}, {0, 5}};  // to, from
    for (const auto& [to, from] : moves) {
      Tensor t = start.to(device);
      t.narrow(0, to, 16).copy_(t.narrow(0, from, 16));
      REQUIRE(t.toVector() == shifted(to, from, 16));
    }
  }
  SECTION("a view copied onto itself is left as it is") {
    Tensor t = start.to(device);
    t.copy_(t);
    t.view({4, 6}).transpose(0, 1).copy_(t.view({4, 6}).transpose(0, 1));
    REQUIRE(t.toVector() == counting);
  }
  SECTION("strided: a 4 x 6 tensor's transpose copied onto its rows") {
    Tensor t = start.to(device);
    Tensor square = t.narrow(0, 0, 16).view({4, 4});
    square.copy_(square.transpose(0, 1));
    std::vector<float> expected = counting;
    for (size_t r = 0; r < 4; ++r)
      for (size_t c = 0; c < 4; ++c) expected[r * 4 + c] = counting[c * 4 + r];
    REQUIRE(t.toVector() == expected);
  }
  SECTION("copyAlong within one tensor, rows overlapping on both sides") {
    // A 2 x 12 tensor: indices 0..7 of each row to 2..9, each row a run that overlaps its source.
    Tensor t = start.to(device).view({2, 12});
    nn::copyAlong(t, 2, t, 0, 1, 8);
    std::vector<float> expected = counting;
    for (size_t r = 0; r < 2; ++r)
      for (size_t k = 0; k < 8; ++k) expected[r * 12 + 2 + k] = counting[r * 12 + k];
    REQUIRE(t.view({24}).toVector() == expected);
    // Along the first dimension: rows 0..1 of a 6 x 4 tensor to rows 1..2.
    Tensor u = start.to(device).view({6, 4});
    nn::copyAlong(u, 1, u, 0, 0, 2);
    REQUIRE(u.view({24}).toVector() == shifted(4, 0, 8));
  }
}

NN_MULTI_DEVICE_TEST_CASE("copies between two devices keep every value and land after the work queued before them",
                          "[Backend]") {
  const std::vector<Device> devices = kind.devices(2);
  const Device a = devices[0], b = devices[1];
  // 12 MB: more than one chunk of the CUDA backend's 8 MB staging buffer.
  const Tensor host = nn::test::randomTensor({3 << 20}, 3);
  const Tensor onA = host.to(a);
  const Tensor onB = onA.to(b);
  REQUIRE(onB.device() == b);
  REQUIRE(onB.storage() != onA.storage());
  REQUIRE(onB.toVector() == host.toVector());
  REQUIRE(onB.to(a).toVector() == host.toVector());
  REQUIRE(onA.to(a).is(onA));

  // Strided on both sides, between the devices.
  Tensor column = Tensor::zeros({3, 4}, b);
  column.select(1, 2).copy_(Tensor::fromVector({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, a).select(1, 1));
  REQUIRE(column.toVector() == std::vector<float>{0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 9, 0});

  // A copy lands after the work queued on the destination: a fill just before it does not
  // overwrite it.
  Tensor target = Tensor::full({3 << 20}, 7.f, b);
  target.copy_(onA);
  REQUIRE(target.toVector() == host.toVector());
}

NN_DEVICE_TEST_CASE("an SGD step on a device gives the host's parameters bit for bit", "[Backend][SGD]") {
  // More than one grid of CUDA blocks (2^20 floats a pass). Each element is the nn/math/Sgd.h
  // formula on the same floats, with no fused multiply-add on either side.
  const Device device = kind.compared();
  const int64_t n = (int64_t{1} << 20) + 3;
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    nn::SgdOptions options;
    options.learningRate = 0.1f;
    options.momentum = 0.9f;
    options.dampening = 0.f;
    options.weightDecay = 5e-4f;
    options.nesterov = nesterov;
    options.learningRateDecay = 1e-3f;
    Tensor x = nn::test::randomTensor({n}, 41), g = nn::test::randomTensor({n}, 42);
    Tensor xOn = x.to(device), gOn = g.to(device);
    nn::SGD reference({x, g}, options);
    nn::SGD tested({xOn, gOn}, options);
    // Three steps: the first sets the velocity, the later ones read it.
    for (int step = 0; step < 3; ++step) {
      reference.step();
      tested.step();
    }
    REQUIRE(xOn.device() == device);
    REQUIRE(xOn.toVector() == x.toVector());
    REQUIRE(tested.momentumBuffer().toVector() == reference.momentumBuffer().toVector());
  }
}

NN_DEVICE_TEST_CASE("each device's thread runs that device's tasks and names the device of a failure",
                    "[DeviceThreads]") {
  // (On a CUDA device the thread also has its device current: cuda_backend_test.cpp asks the
  // runtime.)
  const std::vector<Device> devices = upToEight(kind);
  nn::DeviceThreads threads(devices);
  std::vector<std::thread::id> first(devices.size()), second(devices.size());
  std::vector<std::vector<float>> seen(devices.size());
  // Catch2's assertions are for the test's thread: the workers only record.
  threads.runAll([&](size_t i) { first[i] = std::this_thread::get_id(); });
  threads.runAll([&](size_t i) {
    second[i] = std::this_thread::get_id();
    seen[i] = Tensor::full({3}, static_cast<float>(i), devices[i]).toVector();
  });
  std::set<std::thread::id> distinct(first.begin(), first.end());
  REQUIRE(distinct.size() == devices.size());
  // The first CPU device's tasks run on the caller's thread (Note [The caller as the first
  // device]); a CUDA device has a thread of its own.
  REQUIRE(threads.callerRunsFirst() == (kind.type() == nn::DeviceType::CPU));
  for (size_t i = 0; i < devices.size(); ++i)
    CHECK((first[i] == std::this_thread::get_id()) == (i == 0 && threads.callerRunsFirst()));
  for (size_t i = 0; i < devices.size(); ++i) {
    CAPTURE(i);
    REQUIRE(second[i] == first[i]);
    REQUIRE(seen[i] == std::vector<float>(3, static_cast<float>(i)));
  }
  const size_t last = devices.size() - 1;
  REQUIRE_THROWS_WITH(threads.runAll([&](size_t i) {
    if (i == last) throw nn::Error("no such luck");
  }),
                      Contains("on " + devices[last].str() + ": no such luck"));
  // A round started from inside the first device's task on the caller's thread is refused, and
  // the threads stay usable.
  if (threads.callerRunsFirst()) {
    REQUIRE_THROWS_WITH(threads.runAll([&](size_t i) {
      if (i == 0) threads.runAll([](size_t) {});
    }),
                        Contains("on " + devices[0].str()) && Contains("a round cannot start another"));
    std::atomic<int> ran{0};
    threads.runAll([&](size_t) { ++ran; });
    CHECK(ran == static_cast<int>(devices.size()));
  }
}

NN_DEVICE_TEST_CASE("makeCommunicator gives one device's communicator, which leaves its tensor as it was",
                    "[Communicator]") {
  // Host copies on CPU devices whatever is asked; on CUDA devices NCCL when asked, else peer
  // copies.
  const std::vector<Device> one = {kind.device()};
  REQUIRE(nn::makeCommunicator(one, false)->name() == (kind.isCpu() ? "host copies" : "peer copies"));
  const auto nccl = nn::makeCommunicator(one, true);
  REQUIRE(nccl->name() == (kind.isCpu() ? "host copies" : "nccl"));
  const Tensor host = nn::test::randomTensor({17}, 4);
  const std::vector<Tensor> t = {host.to(kind.device())};
  nccl->allReduce(t);
  REQUIRE(t[0].toVector() == host.toVector());
  nccl->reduce(t);
  nccl->broadcast(t);
  REQUIRE(t[0].toVector() == host.toVector());
}

NN_MULTI_DEVICE_TEST_CASE("every communicator scatters the root's tensor into parts of their own sizes",
                          "[Communicator]") {
  const std::vector<Device> devices = upToEight(kind);
  const size_t ranks = devices.size();
  // Parts of 3 rows, 2 rows, ..., and none for the last rank (a batch with fewer rows than
  // devices), of 5 floats a row, so that every part starts where the one before it ended.
  std::vector<int64_t> rows(ranks);
  int64_t total = 0;
  for (size_t r = 0; r + 1 < ranks; ++r) total += rows[r] = r == 0 ? 3 : 2;
  const Tensor host = nn::test::randomTensor({total, 5}, 6);
  const std::vector<float> values = host.toVector();
  for (bool useNCCL : {false, true}) {
    CAPTURE(useNCCL);
    const std::unique_ptr<nn::Communicator> communicator = nn::makeCommunicator(devices, useNCCL);
    const Tensor source = Tensor::empty(host.sizes(), devices[0]).copy_(host);
    std::vector<Tensor> parts;
    for (size_t r = 0; r < ranks; ++r) parts.push_back(Tensor::full({rows[r], 5}, -1.f, devices[r]));
    for (int call = 0; call < 2; ++call) {  // twice: a pooled set of NCCL communicators, the same parts
      communicator->scatter(source, parts);
      size_t offset = 0;
      for (size_t r = 0; r < ranks; ++r) {
        CAPTURE(r);
        const std::vector<float> expected(values.begin() + static_cast<std::ptrdiff_t>(offset),
                                          values.begin() + static_cast<std::ptrdiff_t>(offset + 5 * rows[r]));
        REQUIRE(parts[r].toVector() == expected);
        offset += 5 * static_cast<size_t>(rows[r]);
      }
    }
    REQUIRE(source.toVector() == values);

    const std::string name = communicator->name();
    const std::string type = name == "host copies" ? "HostCommunicator.scatter"
                             : name == "nccl"      ? "NcclCommunicator.scatter"
                                                   : "PeerCommunicator.scatter";
    std::vector<Tensor> swapped = parts;
    std::swap(swapped[0], swapped[1]);
    REQUIRE_THROWS_WITH(communicator->scatter(source, swapped),
                        Contains(type + ": expected part 0 on " + devices[0].str()));
    REQUIRE_THROWS_WITH(communicator->scatter(parts[1], parts),
                        Contains(type + ": expected a contiguous source on " + devices[0].str()));
    std::vector<Tensor> short_ = parts;
    short_[0] = Tensor::empty({2, 5}, devices[0]);
    REQUIRE_THROWS_WITH(communicator->scatter(source, short_),
                        Contains(type + ": the parts hold " + std::to_string(5 * (total - 1)) +
                                 " elements, the source " + std::to_string(5 * total)));
  }
}

NN_MULTI_DEVICE_TEST_CASE("the communicators of several devices give the host's rank-ordered sums", "[Communicator]") {
  const std::vector<Device> devices = upToEight(kind);
  const std::vector<Tensor> host = hostRanks(devices.size(), {129, 7});
  const std::vector<float> sum = hostSum(host);
  for (bool useNCCL : {false, true}) {
    CAPTURE(useNCCL);
    const std::unique_ptr<nn::Communicator> communicator = nn::makeCommunicator(devices, useNCCL);
    const std::string name = communicator->name();
    REQUIRE(name == (kind.isCpu() ? "host copies" : useNCCL ? "nccl" : "peer copies"));
    // Host and peer copies make the same float additions in the same order as hostSum: equal
    // bit for bit. NCCL adds in an order of its own: a few roundings of sums below 8 apart.
    const double tolerance = name == "nccl" ? 1e-5 : 0;

    std::vector<Tensor> t = onDevices(host, devices);
    communicator->reduce(t);
    REQUIRE(nn::test::maxAbsDiff(t[0], sum) <= tolerance);
    for (size_t r = 1; r < t.size(); ++r) REQUIRE(t[r].toVector() == host[r].toVector());
    communicator->broadcast(t);
    const std::vector<float> root = t[0].toVector();
    for (const Tensor& x : t) REQUIRE(x.toVector() == root);

    t = onDevices(host, devices);
    communicator->allReduce(t);
    for (const Tensor& x : t) REQUIRE(nn::test::maxAbsDiff(x, sum) <= tolerance);

    // Every call takes one tensor per device, in the devices' order; the error names the
    // communicator's class.
    const std::string type = name == "host copies" ? "HostCommunicator"
                             : name == "nccl"      ? "NcclCommunicator"
                                                   : "PeerCommunicator";
    std::vector<Tensor> swapped = t;
    std::swap(swapped[0], swapped[1]);
    REQUIRE_THROWS_WITH(communicator->reduce(swapped),
                        Contains(type + ".reduce: expected tensor 0 on " + devices[0].str()));
    // (PeerCommunicator's allReduce is its reduce and broadcast, and names the reduce.)
    REQUIRE_THROWS_WITH(communicator->allReduce({t[0]}),
                        Contains(type + ".") && Contains("expected one tensor per device"));
  }
}

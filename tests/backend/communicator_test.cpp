// HostCommunicator: rank-ordered sums and copies, serial and spread over device threads
// by chunks, with the same floats either way.
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "cunn/cunn.h"
#include "nn/cpu/HostCommunicator.h"

using nn::Device;
using nn::HostCommunicator;
using nn::Tensor;

namespace {

// One tensor per rank on cpu:0..ranks-1, element i of rank r = (r + 1) * 0.1 + i * 1e-3,
// values whose sums round differently in another order.
std::vector<Tensor> rankTensors(size_t ranks, int64_t n) {
  std::vector<Tensor> tensors;
  for (size_t r = 0; r < ranks; ++r) {
    Tensor t = Tensor::empty({n}, Device::cpu(static_cast<int>(r)));
    for (int64_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(r + 1) * 0.1f + static_cast<float>(i) * 1e-3f;
    tensors.push_back(t);
  }
  return tensors;
}

// Element i summed in rank order, as a reduce must: ((t0 + t1) + t2) + ...
float rankOrderSum(const std::vector<Tensor>& original, int64_t i) {
  float sum = original[0].data()[i];
  for (size_t r = 1; r < original.size(); ++r) sum += original[r].data()[i];
  return sum;
}

// Every element of the rank-ordered sum.
std::vector<float> rankOrderSums(const std::vector<Tensor>& original) {
  std::vector<float> sums(static_cast<size_t>(original[0].numel()));
  for (size_t i = 0; i < sums.size(); ++i) sums[i] = rankOrderSum(original, static_cast<int64_t>(i));
  return sums;
}

std::vector<Device> cpuDevices(size_t count) {
  std::vector<Device> devices;
  for (size_t r = 0; r < count; ++r) devices.push_back(Device::cpu(static_cast<int>(r)));
  return devices;
}

std::vector<Tensor> copies(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> c;
  for (const Tensor& t : tensors) c.push_back(t.clone());
  return c;
}

}  // namespace

TEST_CASE("host reduce, broadcast and allReduce: rank-ordered, serial or by chunks on device threads",
          "[Communicator]") {
  const size_t ranks = GENERATE(2, 3);
  // Sizes below the parallel threshold, and above it with chunks that do not divide evenly.
  const int64_t n = GENERATE(int64_t{1}, int64_t{17}, int64_t{100003});
  nn::DeviceThreads threads(cpuDevices(ranks));
  HostCommunicator serial(cpuDevices(ranks));
  HostCommunicator chunked(cpuDevices(ranks),
                           [&](size_t count, nn::FunctionRef<void(size_t)> task) { threads.run(count, task); });
  for (HostCommunicator* c : {&serial, &chunked}) {
    const std::vector<Tensor> original = rankTensors(ranks, n);
    const std::vector<float> sums = rankOrderSums(original);

    std::vector<Tensor> reduced = copies(original);
    c->reduce(reduced);
    REQUIRE(reduced[0].toVector() == sums);
    for (size_t r = 1; r < ranks; ++r) REQUIRE(reduced[r].toVector() == original[r].toVector());

    std::vector<Tensor> broadcast = copies(original);
    c->broadcast(broadcast);
    for (size_t r = 0; r < ranks; ++r) REQUIRE(broadcast[r].toVector() == original[0].toVector());

    std::vector<Tensor> all = copies(original);
    c->allReduce(all);
    for (size_t r = 0; r < ranks; ++r) REQUIRE(all[r].toVector() == sums);
  }
}

TEST_CASE("host collectives by chunks run on the threads they are given", "[Communicator]") {
  nn::DeviceThreads threads(std::vector<Device>{Device::cpu(0), Device::cpu(1)});
  std::mutex m;
  std::set<std::thread::id> ids;
  HostCommunicator chunked(cpuDevices(2), [&](size_t count, nn::FunctionRef<void(size_t)> task) {
    threads.run(count, [&](size_t i) {
      {
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      }
      task(i);
    });
  });
  chunked.reduce(rankTensors(2, 1 << 16));
  REQUIRE(ids.size() == 2);
  // One of them the caller's, which runs cpu:0's part (Note [The caller as the first device]).
  REQUIRE(ids.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("host collectives keep NCCL's contract: one tensor per device, every rank in every call", "[Communicator]") {
  HostCommunicator c(cpuDevices(3));
  REQUIRE_THROWS_WITH(c.reduce({}),
                      Catch::Contains("HostCommunicator.reduce") &&
                          Catch::Contains("expected one tensor per device of the communicator (3), got 0"));
  // Two of three ranks, as a batch smaller than the device count would give: refused, as
  // NCCL refuses it.
  REQUIRE_THROWS_WITH(c.reduce(rankTensors(2, 4)),
                      Catch::Contains("expected one tensor per device") && Catch::Contains("every rank takes part"));
  const std::vector<Tensor> mismatched{Tensor::zeros({4}), Tensor::zeros({5}, Device::cpu(1)),
                                       Tensor::zeros({4}, Device::cpu(2))};
  REQUIRE_THROWS_WITH(c.broadcast(mismatched), Catch::Contains("HostCommunicator.broadcast") &&
                                                   Catch::Contains("[5]") && Catch::Contains("[4]"));
  const std::vector<Tensor> misplaced{Tensor::zeros({4}), Tensor::zeros({4}, Device::cpu(2)),
                                      Tensor::zeros({4}, Device::cpu(1))};
  REQUIRE_THROWS_WITH(c.allReduce(misplaced), Catch::Contains("HostCommunicator.allReduce") &&
                                                  Catch::Contains("expected tensor 1 on cpu:1, got one on cpu:2"));
  REQUIRE_THROWS_WITH(nn::makeCommunicator({Device::cpu(0), Device::cpu(0)}, false), Catch::Contains("listed twice"));
}

TEST_CASE("host scatter keeps NCCL's contract: a part per device, contiguous, the source's size in all",
          "[Communicator]") {
  HostCommunicator c(cpuDevices(3));
  std::vector<float> twelve(12);
  for (size_t i = 0; i < twelve.size(); ++i) twelve[i] = static_cast<float>(i);
  const Tensor source = Tensor::fromVector({12}, twelve);
  const std::vector<Tensor> parts{Tensor::zeros({5}), Tensor::zeros({7}, Device::cpu(1)),
                                  Tensor::zeros({0}, Device::cpu(2))};
  c.scatter(source, parts);
  REQUIRE(parts[0].toVector() == std::vector<float>{0, 1, 2, 3, 4});
  REQUIRE(parts[1].toVector() == std::vector<float>{5, 6, 7, 8, 9, 10, 11});
  REQUIRE_THROWS_WITH(c.scatter(source, {parts[0], parts[1]}),
                      Catch::Contains("HostCommunicator.scatter: expected one part per device of the communicator "
                                      "(3), got 2"));
  REQUIRE_THROWS_WITH(c.scatter(Tensor::zeros({12, 2}).select(1, 0), parts),
                      Catch::Contains("expected a contiguous source on cpu:0, got a non-contiguous one on cpu:0"));
  REQUIRE_THROWS_WITH(c.scatter(source.to(Device::cpu(1)), parts),
                      Catch::Contains("expected a contiguous source on cpu:0, got one on cpu:1"));
  const std::vector<Tensor> strided{Tensor::zeros({5}), Tensor::zeros({7, 2}, Device::cpu(1)).select(1, 0),
                                    Tensor::zeros({0}, Device::cpu(2))};
  REQUIRE_THROWS_WITH(c.scatter(source, strided), Catch::Contains("part 1 of sizes [7] is not contiguous"));
  // More than the source holds, and less: refused before anything is copied.
  const std::vector<Tensor> more{Tensor::zeros({5}), Tensor::zeros({8}, Device::cpu(1)),
                                 Tensor::zeros({0}, Device::cpu(2))};
  REQUIRE_THROWS_WITH(c.scatter(source, more),
                      Catch::Contains("the parts up to 1 hold more than the source's 12 elements"));
  REQUIRE(more[0].toVector() == std::vector<float>(5, 0.f));
  const std::vector<Tensor> fewer{Tensor::zeros({5}), Tensor::zeros({6}, Device::cpu(1)),
                                  Tensor::zeros({0}, Device::cpu(2))};
  REQUIRE_THROWS_WITH(c.scatter(source, fewer), Catch::Contains("the parts hold 11 elements, the source 12"));
}

TEST_CASE("makeCommunicator gives CPU devices host copies, with or without threads", "[Communicator]") {
  REQUIRE(nn::makeCommunicator({Device::cpu(0), Device::cpu(1)}, false)->name() == "host copies");
  nn::DeviceThreads threads(std::vector<Device>{Device::cpu(0), Device::cpu(1)});
  auto c = nn::makeCommunicator({Device::cpu(0), Device::cpu(1)}, false,
                                [&](size_t count, nn::FunctionRef<void(size_t)> task) { threads.run(count, task); });
  std::vector<Tensor> t = rankTensors(2, 1 << 16);
  const std::vector<Tensor> original = copies(t);
  c->allReduce(t);
  REQUIRE(t[1].toVector() == rankOrderSums(original));
}

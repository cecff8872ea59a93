// HostCommunicator: rank-ordered sums and copies, serial and spread over device threads
// by chunks, with the same floats either way.
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "cunn/cunn.h"

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
  nn::DeviceThreads threads(std::vector<Device>{Device::cpu(0), Device::cpu(1), Device::cpu(2)});
  HostCommunicator serial;
  HostCommunicator chunked(3, [&](size_t count, nn::FunctionRef<void(size_t)> task) { threads.run(count, task); });
  for (HostCommunicator* c : {&serial, &chunked}) {
    const std::vector<Tensor> original = rankTensors(ranks, n);

    std::vector<Tensor> reduced = copies(original);
    c->reduce(reduced);
    for (int64_t i = 0; i < n; ++i) REQUIRE(reduced[0].data()[i] == rankOrderSum(original, i));
    for (size_t r = 1; r < ranks; ++r) REQUIRE(reduced[r].toVector() == original[r].toVector());

    std::vector<Tensor> broadcast = copies(original);
    c->broadcast(broadcast);
    for (size_t r = 0; r < ranks; ++r) REQUIRE(broadcast[r].toVector() == original[0].toVector());

    std::vector<Tensor> all = copies(original);
    c->allReduce(all);
    for (size_t r = 0; r < ranks; ++r)
      for (int64_t i = 0; i < n; i += 997) REQUIRE(all[r].data()[i] == rankOrderSum(original, i));
  }
}

TEST_CASE("host collectives by chunks run on the threads they are given", "[Communicator]") {
  nn::DeviceThreads threads(std::vector<Device>{Device::cpu(0), Device::cpu(1)});
  std::mutex m;
  std::set<std::thread::id> ids;
  HostCommunicator chunked(2, [&](size_t count, nn::FunctionRef<void(size_t)> task) {
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
  REQUIRE(ids.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("host collectives refuse mismatched tensors, naming the call", "[Communicator]") {
  HostCommunicator c;
  REQUIRE_THROWS_WITH(c.reduce({}), Catch::Contains("HostCommunicator.reduce") && Catch::Contains("at least one"));
  const std::vector<Tensor> mismatched{Tensor::zeros({4}), Tensor::zeros({5}, Device::cpu(1))};
  REQUIRE_THROWS_WITH(c.broadcast(mismatched), Catch::Contains("HostCommunicator.broadcast") &&
                                                   Catch::Contains("[5]") && Catch::Contains("[4]"));
  REQUIRE_THROWS_WITH(HostCommunicator(2, nullptr), Catch::Contains("parallel-for"));
}

TEST_CASE("makeCommunicator gives CPU devices host copies, with or without threads", "[Communicator]") {
  REQUIRE(nn::makeCommunicator({Device::cpu(0), Device::cpu(1)}, false)->name() == "host copies");
  nn::DeviceThreads threads(std::vector<Device>{Device::cpu(0), Device::cpu(1)});
  auto c = nn::makeCommunicator({Device::cpu(0), Device::cpu(1)}, false, &threads);
  std::vector<Tensor> t = rankTensors(2, 1 << 16);
  const std::vector<Tensor> original = copies(t);
  c->allReduce(t);
  REQUIRE(t[1].data()[12345] == rankOrderSum(original, 12345));
}

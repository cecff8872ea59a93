// DataParallelTable's steps, each alone, each body on every device type (tests/support/DeviceTest.h):
// scatter, gather, reduce gradients and broadcast parameters (nn/parallel/DataParallelSteps.h).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "nn/backend/Communicator.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/DeviceThreads.h"
#include "tests/parallel/DataParallelHelpers.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Profiling.h"
#include "tests/support/TempDir.h"

using nn::DataParallelTable;
using nn::Device;
using nn::Tensor;
using nn::test::DeviceKind;
using nn::test::profileRow;
using nn::test::ProfilingOn;
using nn::test::batchInput;
using nn::test::bound;
using nn::test::filled;
using nn::test::iota;
using nn::test::makeNet;
using nn::test::relDiff;
using nn::test::upTo;

// --- the steps, each alone ---------------------------------------------------------------

NN_MULTI_DEVICE_TEST_CASE("step scatter: 15 rows on 4 devices are 4, 4, 4 and 3, each device's own rows on it",
                          "[DataParallelTable][steps]") {
  std::vector<nn::Slice> slices;
  auto lengths = [&] {
    std::vector<int64_t> out;
    for (const nn::Slice& s : slices) out.push_back(s.length);
    return out;
  };
  nn::splitBatch(15, 4, slices);
  REQUIRE(lengths() == std::vector<int64_t>{4, 4, 4, 3});
  REQUIRE(slices[3].start == 12);
  nn::splitBatch(6, 4, slices);  // the remainder, 2, to the first two
  REQUIRE(lengths() == std::vector<int64_t>{2, 2, 1, 1});
  REQUIRE(slices[2].start == 4);
  nn::splitBatch(2, 4, slices);  // fewer rows than devices: the first two, a row each
  REQUIRE(lengths() == std::vector<int64_t>{1, 1});
  REQUIRE(slices[1].start == 1);

  const int n = upTo(kind, 4);
  for (int dim : {0, 1}) {
    CAPTURE(dim);
    const Tensor src = dim == 0 ? iota({15, 3}) : iota({2, 15, 3});
    nn::splitBatch(15, static_cast<size_t>(n), slices);
    std::vector<Tensor> parts(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const nn::Slice s = slices[static_cast<size_t>(i)];
      const Tensor& part = nn::scatterSlice(src, dim, s, kind.device(i), parts[static_cast<size_t>(i)]);
      REQUIRE(part.is(parts[static_cast<size_t>(i)]));
      REQUIRE(part.device() == kind.device(i));
      const Tensor expected = src.narrow(dim, s.start, s.length).contiguous();
      REQUIRE(part.sizes() == expected.sizes());
      REQUIRE(part.toVector() == expected.toVector());
    }
  }
}

NN_MULTI_DEVICE_TEST_CASE("step gather: each device's part joined along dim, in order, on the first device",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<int64_t> lengths = {2, 3, 1};
  // Part i is [2, lengths[i], 2] holding 100 i, 100 i + 1, ...
  std::vector<Tensor> parts;
  std::vector<const Tensor*> pointers;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    parts.push_back(kind.on(iota({2, lengths[static_cast<size_t>(i)], 2}, 100.f * static_cast<float>(i)), i));
    total += lengths[static_cast<size_t>(i)];
  }
  for (const Tensor& p : parts) pointers.push_back(&p);
  Tensor joined;
  nn::gatherParts(pointers, 1, kind.devices(n), joined);
  REQUIRE(joined.device() == kind.device(0));
  REQUIRE(joined.sizes() == std::vector<int64_t>{2, total, 2});
  // Row a of the joined tensor is row a of each part in turn.
  std::vector<float> expected;
  for (int64_t a = 0; a < 2; ++a)
    for (int i = 0; i < n; ++i) {
      const int64_t length = lengths[static_cast<size_t>(i)];
      for (int64_t k = 0; k < length * 2; ++k)
        expected.push_back(100.f * static_cast<float>(i) + static_cast<float>(a * length * 2 + k));
    }
  REQUIRE(joined.toVector() == expected);

  // A part whose size differs in another dimension is named by its device.
  const Tensor wrong = kind.on(Tensor::zeros({2, 1, 3}), n - 1);
  pointers.back() = &wrong;
  REQUIRE_THROWS_WITH(nn::gatherParts(pointers, 1, kind.devices(n), joined),
                      Catch::Contains(kind.device(n - 1).str()) && Catch::Contains("[2, 1, 3]"));
}

namespace {

// Linear(3, 2) replicas, one per device, weights 0.5, replica r's gradients r + 1 (weight)
// and 10 (r + 1) (bias).
std::vector<std::shared_ptr<nn::Linear>> linearReplicas(const std::vector<Device>& devices) {
  std::vector<std::shared_ptr<nn::Linear>> out;
  for (size_t r = 0; r < devices.size(); ++r) {
    auto linear = std::make_shared<nn::Linear>(3, 2);
    linear->to(devices[r]);
    linear->weight.fill_(0.5f);
    linear->bias.fill_(0.5f);
    linear->gradWeight.fill_(static_cast<float>(r + 1));
    linear->gradBias.fill_(10.f * static_cast<float>(r + 1));
    out.push_back(linear);
  }
  return out;
}

std::vector<nn::ModulePtr> asModules(const std::vector<std::shared_ptr<nn::Linear>>& linears) {
  return std::vector<nn::ModulePtr>(linears.begin(), linears.end());
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("step reduce gradients: the first replica gets the sum, the others keep their own",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<Device> devices = kind.devices(n);
  auto communicator = nn::makeCommunicator(devices, false);
  const float sum = static_cast<float>(n * (n + 1) / 2);  // 1 + 2 + ... + n
  for (bool flatten : {true, false}) {
    CAPTURE(flatten);
    const auto linears = linearReplicas(devices);
    const auto replicas = asModules(linears);
    nn::ReplicaTensors tensors;
    if (flatten) tensors.flatten(replicas);
    nn::reduceGradients(replicas, *communicator, tensors);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradWeight, filled(6, sum)) == 0);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradBias, filled(2, 10 * sum)) == 0);
    for (int r = 1; r < n; ++r) {
      CAPTURE(r);
      REQUIRE(nn::test::maxAbsDiff(linears[static_cast<size_t>(r)]->gradWeight, filled(6, float(r + 1))) == 0);
      REQUIRE(nn::test::maxAbsDiff(linears[static_cast<size_t>(r)]->gradBias, filled(2, 10.f * float(r + 1))) == 0);
    }
    for (const auto& linear : linears) REQUIRE(nn::test::maxAbsDiff(linear->weight, filled(6, 0.5f)) == 0);
  }

  SECTION("a replica flattened again since (an outer getParameters) is reduced parameter by parameter") {
    const auto linears = linearReplicas(devices);
    const auto replicas = asModules(linears);
    nn::ReplicaTensors tensors;
    tensors.flatten(replicas);
    nn::reduceGradients(replicas, *communicator, tensors);
    auto outer = std::make_shared<nn::Sequential>();
    outer->add(replicas.back());
    outer->getParameters();
    linears.back()->gradWeight.fill_(7);  // its old flat buffer still holds n
    linears[0]->gradWeight.fill_(1);
    nn::reduceGradients(replicas, *communicator, tensors);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradWeight, filled(6, sum - static_cast<float>(n) + 7)) == 0);
  }
  SECTION("replicas without parameters have nothing to reduce") {
    std::vector<nn::ModulePtr> relus;
    for (int r = 0; r < n; ++r) relus.push_back(std::make_shared<nn::ReLU>());
    nn::ReplicaTensors tensors;
    tensors.flatten(relus);
    REQUIRE_NOTHROW(nn::reduceGradients(relus, *communicator, tensors));
  }
}

NN_MULTI_DEVICE_TEST_CASE("step broadcast parameters: the first replica's parameters to all, buffers by the policy",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<Device> devices = kind.devices(n);
  auto communicator = nn::makeCommunicator(devices, false);
  for (bool flatten : {true, false})
    for (nn::BufferPolicy policy : {nn::BufferPolicy::BroadcastFirst, nn::BufferPolicy::Average}) {
      CAPTURE(flatten, policy == nn::BufferPolicy::Average);
      // Replica r: weight r + 1, bias -(r + 1), gradient 100 (r + 1), running mean 10 (r + 1),
      // running variance r + 1.
      std::vector<std::shared_ptr<nn::BatchNormalization>> norms;
      std::vector<nn::ModulePtr> replicas;
      for (int r = 0; r < n; ++r) {
        auto bn = std::make_shared<nn::BatchNormalization>(2);
        bn->to(devices[static_cast<size_t>(r)]);
        const float v = static_cast<float>(r + 1);
        bn->weight.fill_(v);
        bn->bias.fill_(-v);
        bn->gradWeight.fill_(100 * v);
        bn->runningMean.fill_(10 * v);
        bn->runningVar.fill_(v);
        norms.push_back(bn);
        replicas.push_back(bn);
      }
      nn::ReplicaTensors tensors;
      if (flatten) tensors.flatten(replicas);
      nn::broadcastParameters(replicas, *communicator, tensors, policy);
      const float average = static_cast<float>(n + 1) / 2;  // of 1, 2, ..., n
      const bool first = policy == nn::BufferPolicy::BroadcastFirst;
      for (int r = 0; r < n; ++r) {
        CAPTURE(r);
        const auto& bn = norms[static_cast<size_t>(r)];
        REQUIRE(nn::test::maxAbsDiff(bn->weight, filled(2, 1)) == 0);
        REQUIRE(nn::test::maxAbsDiff(bn->bias, filled(2, -1)) == 0);
        REQUIRE(nn::test::maxAbsDiff(bn->gradWeight, filled(2, 100.f * float(r + 1))) == 0);  // left alone
        REQUIRE(nn::test::maxAbsDiff(bn->runningMean, filled(2, first ? 10 : 10 * average)) < 1e-5);
        REQUIRE(nn::test::maxAbsDiff(bn->runningVar, filled(2, first ? 1 : average)) < 1e-6);
      }
    }
}

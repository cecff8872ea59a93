// The helpers of the DataParallelTable tests (data_parallel_*_test.cpp): a small network,
// inputs whose values tell where they came from, and the bounds of comparisons with the plain
// module.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/nn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

namespace nn::test {

inline std::shared_ptr<nn::Sequential> makeNet(uint64_t seed) {
  nn::manualSeed(seed);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(6, 8));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(8, 3));
  return net;
}

// Devices 0 .. min(count, available) - 1 of the kind: a body written for 4 devices runs on as
// many as there are (two GPUs, say).
inline int upTo(const DeviceKind& kind, int count) { return std::min(count, kind.available()); }

// Largest difference relative to max(1, |value|), so the bound reads as float tolerance; the
// tensors may be on any devices.
inline double relDiff(const Tensor& a, const Tensor& b) {
  const auto x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / std::max(1.0, std::fabs(double(y[i]))));
  return worst;
}

// The bound for comparing with the plain module on the host: on CPU devices the replicas sum
// as it does, up to OpenBLAS's rounding of fewer rows; cuBLAS and cuDNN sum in other orders.
inline double bound(const DeviceKind& kind, double onCpu) { return kind.isCpu() ? onCpu : std::max(onCpu, 1e-4); }

// Input whose dimension `dim` is the batch: [batch, 6] for dim 0, [2, batch, 6] for dim 1.
inline Tensor batchInput(int dim, int64_t batch, uint64_t seed) {
  return dim == 0 ? nn::test::randomTensor({batch, 6}, seed) : nn::test::randomTensor({2, batch, 6}, seed);
}

// 0, 1, 2, ... in row-major order: every element tells where it came from.
inline Tensor iota(const std::vector<int64_t>& sizes, float first = 0) {
  std::vector<float> values(static_cast<size_t>(nn::product(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + static_cast<float>(i);
  return Tensor::fromVector(sizes, values);
}

inline std::vector<float> filled(size_t count, float value) { return std::vector<float>(count, value); }

}  // namespace nn::test

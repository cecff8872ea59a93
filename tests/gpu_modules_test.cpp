// The modules, criterions and tensor operations on CUDA tensors compared with the CPU ones, on
// odd sizes and non-contiguous inputs. Tagged [gpu]: where the machine has no CUDA device,
// tests/main.cpp leaves them out of the run and counts them as skipped.
//
// Where a kernel computes each element with the CPU's nn/math formula from the same inputs,
// the results are compared bit for bit. Where a sum is taken in another order, or through
// CUDA's expf and logf (within 2 ulp of the correctly rounded value, CUDA C Programming Guide,
// "Mathematical functions"), the tolerance is derived next to the comparison.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "cunn/cunn.h"
#include "tests/GradCheck.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

Device gpu() { return Device::cuda(0); }

// `host`'s values on the GPU in a non-contiguous tensor: stored with its first and last
// dimensions swapped, and seen through a transpose.
Tensor stridedOnGpu(const Tensor& host) {
  const int last = host.dim() - 1;
  const Tensor t = host.transpose(0, last).contiguous().to(gpu()).transpose(0, last);
  REQUIRE(!t.isContiguous());
  return t;
}

}  // namespace

TEST_CASE("strided copies, add_, mul_ and cmul_ on CUDA tensors give the CPU's floats", "[gpu]") {
  const Tensor host = nn::test::randomTensor({5, 7, 3}, 61);
  const Tensor other = nn::test::randomTensor({5, 7, 3}, 62);

  // Strided to contiguous, contiguous to strided, strided to strided, within the device.
  const Tensor strided = stridedOnGpu(host);
  REQUIRE(strided.toVector() == host.toVector());
  REQUIRE(strided.contiguous().toVector() == host.toVector());
  Tensor target = Tensor::empty({3, 7, 5}, gpu()).transpose(0, 2);
  target.copy_(host.to(gpu()));
  REQUIRE(target.toVector() == host.toVector());
  Tensor narrowed = Tensor::zeros({5, 9, 3}, gpu());
  narrowed.narrow(1, 1, 7).copy_(strided);
  REQUIRE(narrowed.narrow(1, 1, 7).toVector() == host.toVector());
  REQUIRE(narrowed.select(1, 0).toVector() == std::vector<float>(15, 0.f));
  // Between devices with a strided side on the GPU.
  Tensor back = Tensor::empty({3, 7, 5}).transpose(0, 2);
  back.copy_(strided);
  REQUIRE(back.toVector() == host.toVector());

  // The arithmetic: one IEEE operation per element on both devices, equal bit for bit.
  Tensor a = host.clone(), aGpu = host.to(gpu());
  const Tensor o = other.to(gpu());
  a.add_(other, -0.3f);
  aGpu.add_(o, -0.3f);
  REQUIRE(aGpu.toVector() == a.toVector());
  a.mul_(1.7f);
  aGpu.mul_(1.7f);
  REQUIRE(aGpu.toVector() == a.toVector());
  a.cmul_(other);
  aGpu.cmul_(o);
  REQUIRE(aGpu.toVector() == a.toVector());
  REQUIRE_THROWS_WITH(aGpu.add_(strided), Contains("nn.Tensor.add_: needs contiguous tensors"));
}

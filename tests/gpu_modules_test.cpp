// The modules, criterions and tensor operations on CUDA tensors compared with the CPU ones, on
// odd sizes and non-contiguous inputs. Tagged [gpu]: where the machine has no CUDA device,
// tests/main.cpp leaves them out of the run and counts them as skipped.
//
// Where a kernel computes each element with the CPU's nn/math formula from the same inputs,
// the results are compared bit for bit. Where a sum is taken in another order, or through
// CUDA's expf and logf (within 2 ulp of the correctly rounded value, CUDA C Programming Guide,
// "Mathematical functions"), or through cuDNN, the tolerance is derived next to the
// comparison, in units of kEps = 2^-24 (half the spacing of floats in [1, 2)).
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

constexpr double kEps = 1.0 / (1 << 24);

Device gpu() { return Device::cuda(0); }

// `host`'s values on the GPU in a non-contiguous tensor: every other float of a tensor with
// one more dimension, of size 2.
Tensor stridedOnGpu(const Tensor& host) {
  std::vector<int64_t> sizes = host.sizes();
  sizes.push_back(2);
  Tensor wide = Tensor::zeros(sizes);
  wide.select(host.dim(), 0).copy_(host);
  const Tensor t = wide.to(gpu()).select(host.dim(), 0);
  REQUIRE(!t.isContiguous());
  return t;
}

double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}

double maxAbs(const std::vector<float>& a) {
  double worst = 0;
  for (float x : a) worst = std::max(worst, std::fabs(double(x)));
  return worst;
}

// The largest 1 / sqrt(var + eps) over the features of x [batch, features, ...], with the
// biased variance of each feature over the batch and positions, as training mode takes it.
double largestInvstd(const Tensor& x, double eps) {
  const int64_t batch = x.size(0), features = x.size(1), positions = x.numel() / (batch * features);
  const std::vector<float> v = x.toVector();
  double largest = 0;
  for (int64_t c = 0; c < features; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p = 0; p < positions; ++p) sum += v[(n * features + c) * positions + p];
    const double mean = sum / double(batch * positions);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p = 0; p < positions; ++p) {
        const double d = v[(n * features + c) * positions + p] - mean;
        squares += d * d;
      }
    largest = std::max(largest, 1 / std::sqrt(squares / double(batch * positions) + eps));
  }
  return largest;
}

}  // namespace

TEST_CASE("strided copies, add_, mul_ and cmul_ on CUDA tensors give the CPU's floats", "[gpu]") {
  const Tensor host = nn::test::randomTensor({5, 7, 3}, 61);
  const Tensor other = nn::test::randomTensor({5, 7, 3}, 62);

  // Strided to contiguous, contiguous to strided, strided to strided, within the device; a
  // transpose, whose strides do not decrease.
  const Tensor strided = host.transpose(0, 2).contiguous().to(gpu()).transpose(0, 2);
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

TEST_CASE("SoftMax and LogSoftMax on CUDA (cuDNN) agree with the CPU modules", "[gpu]") {
  // Every rank, the class dimension odd and, from 3-D on, inner positions; inputs and
  // gradOutputs non-contiguous on the GPU.
  const std::vector<std::vector<int64_t>> shapes{{13}, {7, 13}, {5, 7, 3}, {3, 5, 4, 3}};
  for (const std::vector<int64_t>& sizes : shapes) {
    CAPTURE(sizes);
    const double classes = static_cast<double>(sizes.size() <= 2 ? sizes.back() : sizes[sizes.size() - 3]);
    const Tensor x = nn::test::randomTensor(sizes, 71, -4, 4);
    const Tensor g = nn::test::randomTensor(sizes, 72);
    for (bool log : {false, true}) {
      CAPTURE(log);
      std::shared_ptr<nn::Module> onCpu, onGpu;
      if (log) {
        onCpu = std::make_shared<nn::LogSoftMax>();
        onGpu = std::make_shared<nn::LogSoftMax>();
      } else {
        onCpu = std::make_shared<nn::SoftMax>();
        onGpu = std::make_shared<nn::SoftMax>();
      }
      const std::vector<float> y = onCpu->forward(x).toVector();
      const Tensor& yGpu = onGpu->forward(stridedOnGpu(x));
      REQUIRE(yGpu.device() == gpu());
      const std::vector<float> gi = onCpu->backward(x, g).toVector();
      const std::vector<float> giGpu = onGpu->backward(stridedOnGpu(x), stridedOnGpu(g)).toVector();
      // The exps: the CPU's expf is within 1 ulp; cuDNN's may be the fast one, within
      // 2 + 1.17 |x - max| <= 12 ulp for |x| <= 4: 16 ulp = 32 kEps relative, taken for both.
      // Each side sums C terms in its own order, (C - 1) kEps relative each.
      //   softmax y = e / sum, y <= 1:   2 * 32 + 2 C + 2 divisions  -> (2C + 70) kEps
      //   log-softmax (x - max) - log(sum): log sum off by (32 + C) kEps, plus the roundings
      //   of log and of the subtraction, a few kEps of |y|          -> (C + 40) + 4 |y| kEps
      // Backward, with g in [-1, 1) and the forward's differences carried in:
      //   softmax y (g - sum g y): sum g y off by the forward's difference plus C kEps, and
      //   y (<= 1) times it; 3 x the forward's tolerance + (C + 4) kEps
      //   log-softmax g - exp(y) sum g: exp(y) off by the forward's tolerance plus 32 kEps,
      //   times |sum g| <= C; sum g off by C^2 kEps; the subtraction 2 (C + 1) kEps.
      const double forward = log ? (classes + 40 + 4 * maxAbs(y)) * kEps : (2 * classes + 70) * kEps;
      const double backward = log ? (forward + 32 * kEps) * classes + (classes * classes + 2 * (classes + 1)) * kEps
                                  : 3 * forward + (classes + 4) * kEps;
      REQUIRE(maxAbsDiff(yGpu.toVector(), y) <= forward);
      REQUIRE(maxAbsDiff(giGpu, gi) <= backward);
    }
  }
}

TEST_CASE("BatchNormalization and SpatialBatchNormalization on CUDA agree with the CPU modules", "[gpu]") {
  // [15, 7]: 15 values per feature; [3, 5, 11, 13]: 429 per plane, more than one block's
  // threads (256), so each thread sums several. Inputs and gradOutputs non-contiguous.
  const std::vector<std::vector<int64_t>> shapes{{15, 7}, {3, 5, 11, 13}};
  for (const std::vector<int64_t>& sizes : shapes) {
    CAPTURE(sizes);
    const int64_t features = sizes[1];
    const double m = double(Tensor::empty(sizes).numel() / features);
    std::shared_ptr<nn::BatchNormalization> onCpu;
    if (sizes.size() == 2)
      onCpu = std::make_shared<nn::BatchNormalization>(features);
    else
      onCpu = std::make_shared<nn::SpatialBatchNormalization>(features);
    onCpu->weight.copy_(nn::test::randomTensor({features}, 81, 0.5f, 1.5f));
    onCpu->bias.copy_(nn::test::randomTensor({features}, 82));
    const nn::ModulePtr fresh = onCpu->clone();  // for evaluation mode, before any training
    auto onGpu = std::dynamic_pointer_cast<nn::BatchNormalization>(onCpu->clone());
    onGpu->to(gpu());
    const Tensor x = nn::test::randomTensor(sizes, 83);
    const Tensor g = nn::test::randomTensor(sizes, 84);
    const Tensor xGpu = stridedOnGpu(x), gGpu = stridedOnGpu(g);

    // Training mode. Both devices sum in double, in different orders: the sums differ by
    // about m 2^-53 of their size, so the mean, the variance and the backward's two sums,
    // rounded to float, differ by at most 1 ulp (2 kEps relative), and invstd =
    // 1 / sqrt(var + eps) by at most 2 ulp. With |x|, |g|, |mean| <= 1, |x - mean| <= 2,
    // weight <= 1.5 and invstd <= s (computed from x):
    //   y = (x - mean) invstd w + b:       8 kEps * 3 s * 1.5 + 4 kEps |y| for the roundings
    //   gradInput = (g - gsum / m - (x - mean) dotp s^2 / m) s w, with |dotp / m| <= 2:
    //                                      16 kEps * (2 + 4 s^2) s * 1.5
    //   gradWeight += dotp invstd, |dotp| <= 2m:  8 kEps * 2m s;   gradBias += gsum: 2 kEps m
    const double s = largestInvstd(x, onCpu->eps());
    const std::vector<float> y = onCpu->forward(x).toVector();
    REQUIRE(maxAbsDiff(onGpu->forward(xGpu).toVector(), y) <= 8 * kEps * 3 * s * 1.5 + 4 * kEps * maxAbs(y));
    onCpu->zeroGradParameters();
    onGpu->zeroGradParameters();
    const std::vector<float> gi = onCpu->backward(x, g).toVector();
    REQUIRE(maxAbsDiff(onGpu->backward(xGpu, gGpu).toVector(), gi) <= 16 * kEps * (2 + 4 * s * s) * s * 1.5);
    REQUIRE(maxAbsDiff(onGpu->gradWeight.toVector(), onCpu->gradWeight.toVector()) <= 8 * kEps * 2 * m * s);
    REQUIRE(maxAbsDiff(onGpu->gradBias.toVector(), onCpu->gradBias.toVector()) <= 2 * kEps * m);
    // The running statistics moved by a tenth of the batch mean (<= 1) and unbiased variance
    // (<= 4 m / (m - 1) for |x - mean| <= 2), each off by 1 ulp.
    REQUIRE(maxAbsDiff(onGpu->runningMean.toVector(), onCpu->runningMean.toVector()) <= 2 * kEps);
    REQUIRE(maxAbsDiff(onGpu->runningVar.toVector(), onCpu->runningVar.toVector()) <=
            2 * kEps * 4 * m / (m - 1) + 2 * kEps);

    // Evaluation mode with equal running statistics: output and gradInput are element-wise
    // formulas of the same floats, equal bit for bit; the parameter gradients are sums.
    auto evalCpu = std::dynamic_pointer_cast<nn::BatchNormalization>(fresh);
    auto evalGpu = std::dynamic_pointer_cast<nn::BatchNormalization>(fresh->clone());
    evalGpu->to(gpu());
    evalCpu->evaluate();
    evalGpu->evaluate();
    REQUIRE(evalGpu->forward(xGpu).toVector() == evalCpu->forward(x).toVector());
    evalCpu->zeroGradParameters();
    evalGpu->zeroGradParameters();
    REQUIRE(evalGpu->backward(xGpu, gGpu).toVector() == evalCpu->backward(x, g).toVector());
    // invstd = 1 / sqrt(1 + eps) < 1 and the mean 0: |dotp| <= m, |gsum| <= m.
    REQUIRE(maxAbsDiff(evalGpu->gradWeight.toVector(), evalCpu->gradWeight.toVector()) <= 4 * kEps * m);
    REQUIRE(maxAbsDiff(evalGpu->gradBias.toVector(), evalCpu->gradBias.toVector()) <= 2 * kEps * m);
  }
}

TEST_CASE("ClassNLLCriterion, CrossEntropyCriterion and MSECriterion on CUDA agree with the CPU ones", "[gpu]") {
  // 300 rows: more than the loss kernel's 256 threads, so threads sum several terms; 13
  // classes; a 1-D input of one row. Inputs non-contiguous on the GPU.
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{300, 13}, std::vector<int64_t>{13}}) {
    CAPTURE(sizes);
    const int64_t batch = sizes.size() == 2 ? sizes[0] : 1;
    const double classes = double(sizes.back());
    const Tensor x = nn::test::randomTensor(sizes, 91, -4, 4);
    std::vector<float> labels(batch);
    for (int64_t i = 0; i < batch; ++i) labels[i] = float((i * 7) % 13);
    const Tensor t = Tensor::fromVector({batch}, labels);
    const Tensor xGpu = stridedOnGpu(x), tGpu = t.to(gpu());
    for (bool sizeAverage : {true, false}) {
      CAPTURE(sizeAverage);
      // The losses are sums in double in another order: they differ by at most batch 2^-53
      // times the sum of |terms|, far below a float's ulp here, and rounding to float adds
      // 1 ulp (2 kEps relative). Gradients element-wise (ClassNLL, MSE) are equal bit for bit.
      nn::ClassNLLCriterion nll(sizeAverage), nllGpu(sizeAverage);
      const float nllLoss = nll.forward(x, t);
      REQUIRE(std::fabs(nllGpu.forward(xGpu, tGpu) - nllLoss) <= 2 * kEps * std::fabs(nllLoss) + kEps);
      REQUIRE(nllGpu.backward(xGpu, tGpu).toVector() == nll.backward(x, t).toVector());

      // Cross-entropy: each row's log(sum exp(x - max)) adds the same terms in the same order
      // on both devices, but through CUDA's expf (2 ulp) and logf (1 ulp) on the GPU against
      // the host's (1 ulp each): the sum off by 6 kEps relative, its log by 6 kEps plus
      // 2 ulp of log(sum) <= log(C): (6 + 4 log C) kEps a row, and the loss's own rounding.
      // Its gradient softmax - onehot: exp of an argument off by that much, plus 6 kEps, of
      // a probability <= 1, and the subtraction: (14 + 4 log C) kEps, times the norm <= 1.
      nn::CrossEntropyCriterion ce(sizeAverage), ceGpu(sizeAverage);
      const float ceLoss = ce.forward(x, t);
      const double perRow = (6 + 4 * std::log(classes)) * kEps;
      REQUIRE(std::fabs(ceGpu.forward(xGpu, tGpu) - ceLoss) <=
              perRow * (sizeAverage ? 1 : batch) + 2 * kEps * std::fabs(ceLoss));
      REQUIRE(maxAbsDiff(ceGpu.backward(xGpu, tGpu).toVector(), ce.backward(x, t).toVector()) <=
              (14 + 4 * std::log(classes)) * kEps);

      // MSE against a non-contiguous target: each term (x - t)^2 is exact IEEE arithmetic.
      const Tensor target = nn::test::randomTensor(sizes, 92, -4, 4);
      nn::MSECriterion mse(sizeAverage), mseGpu(sizeAverage);
      const float mseLoss = mse.forward(x, target);
      REQUIRE(std::fabs(mseGpu.forward(xGpu, stridedOnGpu(target)) - mseLoss) <= 2 * kEps * std::fabs(mseLoss) + kEps);
      REQUIRE(mseGpu.backward(xGpu, stridedOnGpu(target)).toVector() == mse.backward(x, target).toVector());
    }
    // Targets on the GPU are checked on the host: a clear error, as on the CPU.
    nn::ClassNLLCriterion nll;
    std::vector<float> bad = labels;
    bad.back() = 13.f;
    REQUIRE_THROWS_WITH(nll.forward(xGpu, Tensor::fromVector({batch}, bad, gpu())),
                        Contains("nn.ClassNLLCriterion") && Contains("is not a class index in [0, 13)"));
  }
}

TEST_CASE("Dropout on CUDA draws the CPU's mask from the same seed and gives its floats", "[gpu]") {
  const Tensor x = nn::test::randomTensor({7, 13, 3}, 101);
  const Tensor g = nn::test::randomTensor({7, 13, 3}, 102);
  nn::Dropout onCpu(0.3f), onGpu(0.3f);
  onCpu.generator().seed(7);
  onGpu.generator().seed(7);
  // Two steps: the second mask follows the first from the generator on both.
  for (int step = 0; step < 2; ++step) {
    const std::vector<float> y = onCpu.forward(x).toVector();
    const Tensor& yGpu = onGpu.forward(stridedOnGpu(x));
    REQUIRE(yGpu.device() == gpu());
    // The same mask, multiplied in by one IEEE product per element: equal bit for bit.
    REQUIRE(onGpu.noise.toVector() == onCpu.noise.toVector());
    REQUIRE(yGpu.toVector() == y);
    REQUIRE(onGpu.backward(stridedOnGpu(x), stridedOnGpu(g)).toVector() == onCpu.backward(x, g).toVector());
  }
  onGpu.evaluate();
  REQUIRE(onGpu.forward(stridedOnGpu(x)).toVector() == x.toVector());
  REQUIRE(onGpu.backward(stridedOnGpu(x), stridedOnGpu(g)).toVector() == g.toVector());
}

TEST_CASE("View, Reshape and Identity pass CUDA tensors through, also non-contiguous ones", "[gpu]") {
  const Tensor x = nn::test::randomTensor({5, 7, 3}, 111);
  const Tensor g = nn::test::randomTensor({5, 21}, 112);
  nn::View view({-1, 21});
  nn::Reshape reshape({21});
  for (nn::Module* module : {static_cast<nn::Module*>(&view), static_cast<nn::Module*>(&reshape)}) {
    CAPTURE(module->toString());
    const Tensor& y = module->forward(stridedOnGpu(x));
    REQUIRE(y.device() == gpu());
    REQUIRE(y.sizes() == std::vector<int64_t>{5, 21});
    REQUIRE(y.toVector() == x.toVector());
    const Tensor& gi = module->backward(stridedOnGpu(x), stridedOnGpu(g));
    REQUIRE(gi.device() == gpu());
    REQUIRE(gi.sizes() == x.sizes());
    REQUIRE(gi.toVector() == g.toVector());
  }
  nn::Identity identity;
  const Tensor xGpu = stridedOnGpu(x);
  REQUIRE(identity.forward(xGpu).storage() == xGpu.storage());
  REQUIRE(identity.forward(xGpu).toVector() == x.toVector());
  REQUIRE(identity.backward(xGpu, xGpu).toVector() == x.toVector());
}

TEST_CASE("Concat on CUDA joins and splits as on the CPU", "[gpu]") {
  // Children without sums (ReLU, Identity): the joined output and the summed gradInput are
  // the same floats added in the same order, equal bit for bit. Every dimension of a 3-D
  // input: outer or inner of 1, and both larger.
  const Tensor x = nn::test::randomTensor({4, 5, 3}, 121);
  for (int dim = 0; dim < 3; ++dim) {
    CAPTURE(dim);
    auto makeConcat = [dim] {
      auto concat = std::make_shared<nn::Concat>(dim);
      concat->add(std::make_shared<nn::ReLU>());
      concat->add(std::make_shared<nn::Identity>());
      concat->add(std::make_shared<nn::ReLU>());
      return concat;
    };
    auto onCpu = makeConcat(), onGpu = makeConcat();
    const std::vector<float> y = onCpu->forward(x).toVector();
    const Tensor& yGpu = onGpu->forward(stridedOnGpu(x));
    REQUIRE(yGpu.device() == gpu());
    REQUIRE(yGpu.sizes() == onCpu->output.sizes());
    REQUIRE(yGpu.toVector() == y);
    const Tensor g = nn::test::randomTensor(onCpu->output.sizes(), 122);
    REQUIRE(onGpu->backward(stridedOnGpu(x), stridedOnGpu(g)).toVector() == onCpu->backward(x, g).toVector());
  }
}

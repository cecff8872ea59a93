// The CPU table of BatchNormKernels: per feature, plain loops over the batch and positions,
// the sums in double.
#include "nn/cpu/Tables.h"
#include "nn/math/BatchNorm.h"

namespace nn::cpu {

namespace {

void statistics(const BatchNormState& st, int64_t c, float& mean, float& invstd) {
  math::batchNormStatistics(st.train, st.saveMean, st.saveInvstd, st.runningMean, st.runningVar, st.eps, c, &mean,
                            &invstd);
}

// Over feature c: dotp = sum (x - mean) * g and gsum = sum g.
void gradientSums(const float* x, const float* g, const BatchNormShape& s, int64_t c, float mean, double& dotp,
                  double& gsum) {
  dotp = 0;
  gsum = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    const int64_t base = (n * s.features + c) * s.positions;
    for (int64_t p = 0; p < s.positions; ++p) {
      gsum += g[base + p];
      dotp += (static_cast<double>(x[base + p]) - mean) * g[base + p];
    }
  }
}

void cpuUpdateOutput(const Device&, const float* x, float* y, const BatchNormShape& s, const BatchNormState& st) {
  const int64_t m = s.batch * s.positions;
  for (int64_t c = 0; c < s.features; ++c) {
    float mean, invstd;
    if (st.train) {
      double sum = 0;
      for (int64_t n = 0; n < s.batch; ++n) {
        const float* xc = x + (n * s.features + c) * s.positions;
        for (int64_t p = 0; p < s.positions; ++p) sum += xc[p];
      }
      mean = math::batchNormAverage(sum, m);
      double sumSquares = 0;
      for (int64_t n = 0; n < s.batch; ++n) {
        const float* xc = x + (n * s.features + c) * s.positions;
        for (int64_t p = 0; p < s.positions; ++p) {
          const double d = static_cast<double>(xc[p]) - mean;
          sumSquares += d * d;
        }
      }
      invstd = math::batchNormInvstd(math::batchNormAverage(sumSquares, m), st.eps);
      st.saveMean[c] = mean;
      st.saveInvstd[c] = invstd;
      st.runningMean[c] = math::batchNormRunningMean(st.runningMean[c], mean, st.momentum);
      st.runningVar[c] = math::batchNormRunningVar(st.runningVar[c], sumSquares, m, st.momentum);
    } else {
      mean = st.runningMean[c];
      invstd = math::batchNormInvstd(st.runningVar[c], st.eps);
    }
    const float w = st.weight ? st.weight[c] : 1.f;
    const float b = st.bias ? st.bias[c] : 0.f;
    for (int64_t n = 0; n < s.batch; ++n) {
      const int64_t base = (n * s.features + c) * s.positions;
      for (int64_t p = 0; p < s.positions; ++p) y[base + p] = math::batchNormOutput(x[base + p], mean, invstd, w, b);
    }
  }
}

void cpuUpdateGradInput(const Device&, const float* x, const float* g, float* gi, const BatchNormShape& s,
                        const BatchNormState& st) {
  const int64_t m = s.batch * s.positions;
  for (int64_t c = 0; c < s.features; ++c) {
    float mean, invstd;
    statistics(st, c, mean, invstd);
    const float w = st.weight ? st.weight[c] : 1.f;
    if (st.train) {
      double dotp, gsum;
      gradientSums(x, g, s, c, mean, dotp, gsum);
      const float gradMean = math::batchNormAverage(gsum, m);
      const float projection = math::batchNormProjection(dotp, invstd, m);
      for (int64_t n = 0; n < s.batch; ++n) {
        const int64_t base = (n * s.features + c) * s.positions;
        for (int64_t p = 0; p < s.positions; ++p)
          gi[base + p] =
              math::batchNormGradInputTraining(g[base + p], x[base + p], mean, invstd, w, gradMean, projection);
      }
    } else {
      for (int64_t n = 0; n < s.batch; ++n) {
        const int64_t base = (n * s.features + c) * s.positions;
        for (int64_t p = 0; p < s.positions; ++p)
          gi[base + p] = math::batchNormGradInputEvaluate(g[base + p], invstd, w);
      }
    }
  }
}

void cpuAccGradParameters(const Device&, const float* x, const float* g, float* gradWeight, float* gradBias,
                          const BatchNormShape& s, const BatchNormState& st, float scale) {
  for (int64_t c = 0; c < s.features; ++c) {
    float mean, invstd;
    statistics(st, c, mean, invstd);
    double dotp, gsum;
    gradientSums(x, g, s, c, mean, dotp, gsum);
    gradWeight[c] += math::batchNormGradWeight(dotp, invstd, scale);
    gradBias[c] += math::batchNormGradBias(gsum, scale);
  }
}

}  // namespace

BatchNormKernels batchNormKernels() { return {&cpuUpdateOutput, &cpuUpdateGradInput, &cpuAccGradParameters}; }

}  // namespace nn::cpu

// The CPU table of BatchNormKernels. The features are cut into one part per compute thread of
// the device (nn/runtime/ComputeThreads.h), each feature's work done whole by one thread, so the results do
// not depend on the thread count. A feature's values are summed in kLanes float lanes, which
// vectorise, a few rows (samples' positions) at a time, and those sums added in double: the
// training forward takes three passes (sum, sum of squared deviations, output), the training
// backward two (the sums of the gradients, gradInput), and accGradParameters none after
// updateGradInput (it takes the sums that pass saved, BatchNormState::gradSums). A ReLU that
// follows is taken in these passes (Note [Batch normalisation, then ReLU], nn/math/BatchNorm.h).
// Synchronised statistics run the same passes one at a time (BatchNormPhase).
#include <algorithm>

#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Tables.h"
#include "nn/math/BatchNorm.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Lanes of the float partial sums: a fixed count, so that every instruction set (8 lanes of
// AVX2 twice, 16 of AVX-512 once) adds the same numbers in the same order.
constexpr int kLanes = 16;

// The last pass over a feature asks for the lines of its output's row kAhead rows ahead, for
// writing: the rows lie a sample apart, in pages of their own where the hardware's prefetchers
// stop, and a step's other tensors have evicted them from every cache, so each line written
// waited for memory (seen in a training step, not in bench/kernels, whose one layer's tensors
// stay in the cache).
constexpr int64_t kAhead = 4;
inline void prefetchRow(float* row, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(row + i, 1);
}
// The first pass over a feature's input (and gradOutput) reads them from memory for the same
// reason, each row's lines in turn: it asks for the row kReadAhead rows ahead.
constexpr int64_t kReadAhead = 4;
inline void prefetchRowForReading(const float* row, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(row + i, 0);
}

// Feature c's row of sample n: `positions` values.
inline int64_t rowOf(const BatchNormShape& s, int64_t n, int64_t c) { return (n * s.features + c) * s.positions; }

// Rows of this many values or more (VGG's 32x32 planes, a 4 KB page a row; a residual network's
// 28x28) are asked for a line at a time instead, the next row's line at the offset being read or
// written: 4 rows ahead all at once, up to 256 requests in bursts of 64, filled the core's queue
// of misses and stopped it until they came.
constexpr int64_t kStreamedRow = 512;
inline bool streamed(const BatchNormShape& s) { return s.positions >= kStreamedRow; }

// A feature's rows are summed in the lanes together up to this many values (fewer rows for long
// ones, at least one), then the lanes added into the double total: short rows (a residual
// network's 7x7 planes) then cost no horizontal sum each.
constexpr int64_t kFlushValues = 1024;

// The rows of sample n in [first, first + rowsPerFlush(s)) go through the float lanes together.
int64_t rowsPerFlush(const BatchNormShape& s) {
  return std::max<int64_t>(1, kFlushValues / std::max<int64_t>(1, s.positions));
}

// The sum of term(v) over feature c's values v of `data`: kLanes float lanes over the whole
// groups of lanes of each row and a float tail over the rest, added into the double total
// every kFlushValues values.
template <typename Term>
NN_CPU_INLINE inline double featureSum(const BatchNormShape& s, const float* data, int64_t c, Term term) {
  const int64_t body = s.positions / kLanes * kLanes, step = rowsPerFlush(s);
  const bool stream = streamed(s);
  double total = 0;
  for (int64_t first = 0; first < s.batch; first += step) {
    float lanes[kLanes] = {};
    float tail = 0;
    for (int64_t n = first; n < std::min(s.batch, first + step); ++n) {
      const float* row = data + rowOf(s, n, c);
      const float* next = n + 1 < s.batch ? data + rowOf(s, n + 1, c) : nullptr;
      if (!stream && n + kReadAhead < s.batch) prefetchRowForReading(data + rowOf(s, n + kReadAhead, c), s.positions);
      for (int64_t p = 0; p < body; p += kLanes) {
        if (stream && next) __builtin_prefetch(next + p, 0);
        for (int j = 0; j < kLanes; ++j) lanes[j] += term(row[p + j]);
      }
      for (int64_t p = body; p < s.positions; ++p) tail += term(row[p]);
    }
    for (int j = 0; j < kLanes; ++j) total += lanes[j];
    total += tail;
  }
  return total;
}

using GradientAtY = math::BatchNormGradientAtY;

// The gradient at y as the loops below take it, the choice made once per feature: gradOutput
// itself, or the gradInput of a ReLU that follows (Note [Batch normalisation, then ReLU]).
struct Plain {
  float operator()(float, float g) const { return g; }
};
struct Rectified {
  GradientAtY at;
  float operator()(float x, float g) const { return at.rectifiedGradient(x, g); }
};

// body(gradient at y), with Plain or Rectified as `at` says. Inlined into each instruction set's
// copy of its caller, as the loops in it.
template <typename Body>
NN_CPU_INLINE inline void withGradientAt(const GradientAtY& at, Body body) {
  if (at.rectified)
    body(Rectified{at});
  else
    body(Plain{});
}

// Over feature c: dotp = sum (x - mean) * g and gsum = sum g, g the gradient at y.
void gradientSums(const float* x, const float* g, const BatchNormShape& s, int64_t c, float mean,
                  const GradientAtY& gradientAt, double& dotp, double& gsum) {
  widest([&]() NN_CPU_INLINE {
    // featureSum's order, for both sums in one pass.
    const int64_t body = s.positions / kLanes * kLanes, step = rowsPerFlush(s);
    const bool stream = streamed(s);
    dotp = 0;
    gsum = 0;
    withGradientAt(gradientAt, [&](const auto at) NN_CPU_INLINE {
      for (int64_t first = 0; first < s.batch; first += step) {
        float dotLanes[kLanes] = {}, sumLanes[kLanes] = {};
        float dotTail = 0, sumTail = 0;
        for (int64_t n = first; n < std::min(s.batch, first + step); ++n) {
          const float* xr = x + rowOf(s, n, c);
          const float* gr = g + rowOf(s, n, c);
          const int64_t next = n + 1 < s.batch ? rowOf(s, n + 1, c) : -1;
          if (!stream && n + kReadAhead < s.batch) {
            prefetchRowForReading(x + rowOf(s, n + kReadAhead, c), s.positions);
            prefetchRowForReading(g + rowOf(s, n + kReadAhead, c), s.positions);
          }
          for (int64_t p = 0; p < body; p += kLanes) {
            if (stream && next >= 0) {
              __builtin_prefetch(x + next + p, 0);
              __builtin_prefetch(g + next + p, 0);
            }
            for (int j = 0; j < kLanes; ++j) {
              const float gy = at(xr[p + j], gr[p + j]);
              sumLanes[j] += gy;
              dotLanes[j] += math::batchNormDotTerm(xr[p + j], mean, gy);
            }
          }
          for (int64_t p = body; p < s.positions; ++p) {
            const float gy = at(xr[p], gr[p]);
            sumTail += gy;
            dotTail += math::batchNormDotTerm(xr[p], mean, gy);
          }
        }
        for (int j = 0; j < kLanes; ++j) {
          gsum += sumLanes[j];
          dotp += dotLanes[j];
        }
        gsum += sumTail;
        dotp += dotTail;
      }
    });
  });
}

// Feature c of the forward: its statistics (training) and its output.
void outputFeature(const float* x, float* y, const BatchNormShape& s, const BatchNormState& st, int64_t c) {
  widest([&]() NN_CPU_INLINE {
    const int64_t m = s.batch * s.positions;
    float mean, invstd;
    if (st.train && st.phase == BatchNormPhase::sumValues) {
      st.statSums[c] = static_cast<float>(featureSum(s, x, c, [](float v) { return v; }));
      return;
    }
    if (st.train && st.phase == BatchNormPhase::sumSquares) {
      const float given = st.saveMean[c];
      st.statSums[c] =
          static_cast<float>(featureSum(s, x, c, [&](float v) { return math::batchNormSquaredDeviation(v, given); }));
      return;
    }
    if (st.train && st.phase == BatchNormPhase::fromSums) {
      mean = st.saveMean[c];
      invstd = st.saveInvstd[c];
    } else if (st.train) {
      mean = math::batchNormAverage(featureSum(s, x, c, [](float v) { return v; }), m);
      const double sumSquares = featureSum(s, x, c, [&](float v) { return math::batchNormSquaredDeviation(v, mean); });
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
    const bool rectified = st.rectified, stream = streamed(s);
    auto output = [&](float v) NN_CPU_INLINE {
      return math::batchNormRectified(math::batchNormOutput(v, mean, invstd, w, b), rectified);
    };
    for (int64_t n = 0; n < s.batch; ++n) {
      const float* xr = x + rowOf(s, n, c);
      float* yr = y + rowOf(s, n, c);
      if (!stream && n + kAhead < s.batch) prefetchRow(y + rowOf(s, n + kAhead, c), s.positions);
      int64_t p = 0;
      if (stream && n + 1 < s.batch)
        for (float* next = y + rowOf(s, n + 1, c); p + kLanes <= s.positions; p += kLanes) {
          __builtin_prefetch(next + p, 1);
          for (int j = 0; j < kLanes; ++j) yr[p + j] = output(xr[p + j]);
        }
      for (; p < s.positions; ++p) yr[p] = output(xr[p]);
    }
  });
}

// Feature c of gradInput; in training also its sums of the gradients, saved where asked.
void gradInputFeature(const float* x, const float* g, float* gi, const BatchNormShape& s, const BatchNormState& st,
                      int64_t c) {
  widest([&]() NN_CPU_INLINE {
    float mean, invstd;
    math::batchNormStatistics(st.train, st.saveMean, st.saveInvstd, st.runningMean, st.runningVar, st.eps, c, &mean,
                              &invstd);
    const float w = st.weight ? st.weight[c] : 1.f;
    const GradientAtY gradientAt = batchNormGradientAtY(st, c, mean, invstd);
    if (!st.train) {
      withGradientAt(gradientAt, [&](const auto at) NN_CPU_INLINE {
        for (int64_t n = 0; n < s.batch; ++n) {
          const float* xr = x + rowOf(s, n, c);
          const float* gr = g + rowOf(s, n, c);
          float* out = gi + rowOf(s, n, c);
          for (int64_t p = 0; p < s.positions; ++p)
            out[p] = math::batchNormGradInputEvaluate(at(xr[p], gr[p]), invstd, w);
        }
      });
      return;
    }
    double dotp, gsum;
    int64_t m = s.batch * s.positions;
    if (st.phase == BatchNormPhase::fromSums) {
      math::batchNormLoadGradSums(st.gradSums, s.features, c, &dotp, &gsum);
      m = st.count;
    } else {
      gradientSums(x, g, s, c, mean, gradientAt, dotp, gsum);
      if (st.gradSums) math::batchNormSaveGradSums(st.gradSums, s.features, c, dotp, gsum);
      if (st.phase == BatchNormPhase::sumGradients) return;
    }
    const float gradMean = math::batchNormAverage(gsum, m);
    const float projection = math::batchNormProjection(dotp, invstd, m);
    withGradientAt(gradientAt, [&](const auto at) NN_CPU_INLINE {
      auto gradient = [&](float xv, float gv) NN_CPU_INLINE {
        return math::batchNormGradInputTraining(at(xv, gv), xv, mean, invstd, w, gradMean, projection);
      };
      const bool stream = streamed(s);
      for (int64_t n = 0; n < s.batch; ++n) {
        const float* xr = x + rowOf(s, n, c);
        const float* gr = g + rowOf(s, n, c);
        float* out = gi + rowOf(s, n, c);
        if (!stream && n + kAhead < s.batch) prefetchRow(gi + rowOf(s, n + kAhead, c), s.positions);
        int64_t p = 0;
        if (stream && n + 1 < s.batch)
          for (float* next = gi + rowOf(s, n + 1, c); p + kLanes <= s.positions; p += kLanes) {
            __builtin_prefetch(next + p, 1);
            for (int j = 0; j < kLanes; ++j) out[p + j] = gradient(xr[p + j], gr[p + j]);
          }
        for (; p < s.positions; ++p) out[p] = gradient(xr[p], gr[p]);
      }
    });
  });
}

void cpuUpdateOutput(const Device& device, const float* x, float* y, const BatchNormShape& s,
                     const BatchNormState& st) {
  parallelRanges(device, s.features, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) outputFeature(x, y, s, st, c);
  });
}

void cpuUpdateGradInput(const Device& device, const float* x, const float* g, float* gi, const BatchNormShape& s,
                        const BatchNormState& st) {
  parallelRanges(device, s.features, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) gradInputFeature(x, g, gi, s, st, c);
  });
}

void cpuAccGradParameters(const Device& device, const float* x, const float* g, float* gradWeight, float* gradBias,
                          const BatchNormShape& s, const BatchNormState& st, float scale) {
  parallelRanges(device, s.features, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      float mean, invstd;
      math::batchNormStatistics(st.train, st.saveMean, st.saveInvstd, st.runningMean, st.runningVar, st.eps, c, &mean,
                                &invstd);
      double dotp, gsum;
      if (st.gradSumsValid)
        math::batchNormLoadGradSums(st.gradSums, s.features, c, &dotp, &gsum);
      else
        gradientSums(x, g, s, c, mean, batchNormGradientAtY(st, c, mean, invstd), dotp, gsum);
      gradWeight[c] += math::batchNormGradWeight(dotp, invstd, scale);
      gradBias[c] += math::batchNormGradBias(gsum, scale);
    }
  });
}

}  // namespace

BatchNormKernels batchNormKernels() {
  BatchNormKernels k{};
  k.updateOutput = &cpuUpdateOutput;
  k.updateGradInput = &cpuUpdateGradInput;
  k.accGradParameters = &cpuAccGradParameters;
  return k;
}

}  // namespace nn::cpu

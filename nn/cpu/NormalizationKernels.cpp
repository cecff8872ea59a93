// The CPU table of NormalizationKernels. The forward and updateGradInput cut the rows into one
// part per compute thread of the device (nn/runtime/ComputeThreads.h), accGradParameters the
// parameters, each row's or parameter's work done whole by one thread, so the results do not
// depend on the thread count. A row's sums are added in kLanes double lanes, which vectorise,
// then the lanes in order: the same numbers in the same order on every instruction set.
#include <algorithm>
#include <type_traits>

#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Tables.h"
#include "nn/math/Normalization.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Lanes of the double partial sums: a fixed count, so that every instruction set (4 doubles of
// AVX2 twice, 8 of AVX-512 once) adds the same numbers in the same order.
constexpr int kLanes = 8;

// Values a part of the work holds at least where there are enough: fewer cost more to hand to a
// thread than they take to compute.
constexpr int64_t kGrainValues = 16384;
int64_t grainOf(int64_t valuesPerItem) { return std::max<int64_t>(1, kGrainValues / std::max<int64_t>(1, valuesPerItem)); }

// Adds term(k) for k in [begin, end) into `lanes` (whole groups of kLanes from begin) and `tail`.
template <typename Term>
NN_CPU_INLINE inline void addRun(int64_t begin, int64_t end, const Term& term, double* lanes, double& tail) {
  const int64_t body = begin + (end - begin) / kLanes * kLanes;
  for (int64_t k = begin; k < body; k += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += term(k + j);
  for (int64_t k = body; k < end; ++k) tail += term(k);
}

// The lanes added in order, then the tail.
NN_CPU_INLINE inline double total(const double* lanes, double tail) {
  double sum = 0;
  for (int j = 0; j < kLanes; ++j) sum += lanes[j];
  return sum + tail;
}

// The sum of term(k) over the n values of a row.
template <typename Term>
NN_CPU_INLINE inline double rowSum(int64_t n, const Term& term) {
  double lanes[kLanes] = {}, tail = 0;
  addRun(0, n, term, lanes, tail);
  return total(lanes, tail);
}

// f(begin, end, c, eachValue) over the values of row `row` in runs: values [begin, end), value
// k's parameter c + (k - begin) where eachValue (std::true_type: LayerNorm, every value its own
// parameter, the whole row one run), else c (std::false_type: GroupNorm, a channel's positions).
template <typename F>
NN_CPU_INLINE inline void forEachRun(const NormalizationShape& s, int64_t row, const F& f) {
  const int64_t first = math::normalizationParameter(row, 0, s.groups, s.groupSize, s.positions);
  if (s.positions == 1) {
    f(int64_t{0}, s.groupSize, first, std::true_type{});
    return;
  }
  for (int64_t k = 0, c = first; k < s.groupSize; k += s.positions, ++c) f(k, k + s.positions, c, std::false_type{});
}

// A parameter of value k of a run as forEachRun gives it: p[c + k - begin] or p[c]; `absent`
// where the module has no affine parameters.
template <typename EachValue>
NN_CPU_INLINE inline float parameterAt(const float* p, float absent, int64_t c, int64_t begin, int64_t k) {
  if (p == nullptr) return absent;
  return EachValue::value ? p[c + k - begin] : p[c];
}

// Row `row` of the forward: its statistics, saved, and its output.
void outputRow(const float* x, float* y, const NormalizationShape& s, const NormalizationState& st, int64_t row) {
  widest([&]() NN_CPU_INLINE {
    const int64_t m = s.groupSize;
    const float* xr = x + row * m;
    float* yr = y + row * m;
    const float mean = math::batchNormAverage(rowSum(m, [&](int64_t k) NN_CPU_INLINE { return double{xr[k]}; }), m);
    const double squares = rowSum(
        m, [&](int64_t k) NN_CPU_INLINE { return math::batchNormSquaredDeviation<double>(xr[k], mean); });
    const float invstd = math::batchNormInvstd(math::batchNormAverage(squares, m), st.eps);
    st.saveMean[row] = mean;
    st.saveInvstd[row] = invstd;
    forEachRun(s, row, [&](int64_t begin, int64_t end, int64_t c, auto eachValue) NN_CPU_INLINE {
      using EachValue = decltype(eachValue);
      for (int64_t k = begin; k < end; ++k)
        yr[k] = math::batchNormOutput(xr[k], mean, invstd, parameterAt<EachValue>(st.weight, 1.f, c, begin, k),
                                      parameterAt<EachValue>(st.bias, 0.f, c, begin, k));
    });
  });
}

// Row `row` of gradInput: the row's sums of the gradients at the normalised values, then gradInput.
void gradInputRow(const float* x, const float* g, float* gi, const NormalizationShape& s,
                  const NormalizationState& st, int64_t row) {
  widest([&]() NN_CPU_INLINE {
    const int64_t m = s.groupSize;
    const float* xr = x + row * m;
    const float* gr = g + row * m;
    float* out = gi + row * m;
    const float mean = st.saveMean[row], invstd = st.saveInvstd[row];
    double dotLanes[kLanes] = {}, sumLanes[kLanes] = {}, dotTail = 0, sumTail = 0;
    forEachRun(s, row, [&](int64_t begin, int64_t end, int64_t c, auto eachValue) NN_CPU_INLINE {
      using EachValue = decltype(eachValue);
      auto gy = [&](int64_t k) NN_CPU_INLINE {
        return math::normalizationScaledGradient(gr[k], parameterAt<EachValue>(st.weight, 1.f, c, begin, k));
      };
      addRun(begin, end, [&](int64_t k) NN_CPU_INLINE { return double{gy(k)}; }, sumLanes, sumTail);
      addRun(
          begin, end, [&](int64_t k) NN_CPU_INLINE { return math::batchNormDotTerm<double>(xr[k], mean, gy(k)); },
          dotLanes, dotTail);
    });
    const float gradMean = math::batchNormAverage(total(sumLanes, sumTail), m);
    const float projection = math::batchNormProjection(total(dotLanes, dotTail), invstd, m);
    forEachRun(s, row, [&](int64_t begin, int64_t end, int64_t c, auto eachValue) NN_CPU_INLINE {
      using EachValue = decltype(eachValue);
      for (int64_t k = begin; k < end; ++k) {
        const float gy =
            math::normalizationScaledGradient(gr[k], parameterAt<EachValue>(st.weight, 1.f, c, begin, k));
        out[k] = math::normalizationGradInput(gy, xr[k], mean, invstd, gradMean, projection);
      }
    });
  });
}

// Parameters of LayerNorm are summed this many at a time, a sample's values of them contiguous.
constexpr int64_t kParameterBlock = 64;

// gradWeight and gradBias of the parameters [first, last): each parameter's values of every
// sample in sample order (then position order), summed in double.
void parameterGradients(const float* x, const float* g, float* gradWeight, float* gradBias,
                        const NormalizationShape& s, const NormalizationState& st, float scale, int64_t first,
                        int64_t last) {
  const int64_t sampleSize = s.groups * s.groupSize, samples = s.rows / s.groups;
  auto rowOf = [&](int64_t n, int64_t c) { return n * s.groups + c * s.positions / s.groupSize; };
  if (s.positions == 1) {
    // LayerNorm: a block of parameters at a time, sample by sample, each parameter's sums apart.
    for (int64_t begin = first; begin < last; begin += kParameterBlock) {
      const int64_t end = std::min(last, begin + kParameterBlock);
      double weightSums[kParameterBlock] = {}, biasSums[kParameterBlock] = {};
      for (int64_t n = 0; n < samples; ++n) {
        for (int64_t c = begin; c < end; ++c) {
          const int64_t row = rowOf(n, c), at = n * sampleSize + c;
          weightSums[c - begin] +=
              math::normalizationWeightTerm<double>(x[at], st.saveMean[row], st.saveInvstd[row], g[at]);
          biasSums[c - begin] += g[at];
        }
      }
      for (int64_t c = begin; c < end; ++c) {
        gradWeight[c] += math::normalizationParameterGradient(weightSums[c - begin], scale);
        gradBias[c] += math::normalizationParameterGradient(biasSums[c - begin], scale);
      }
    }
    return;
  }
  // GroupNorm: a channel's positions in each sample are contiguous, summed in lanes.
  widest([&]() NN_CPU_INLINE {
    for (int64_t c = first; c < last; ++c) {
      double weightLanes[kLanes] = {}, biasLanes[kLanes] = {}, weightTail = 0, biasTail = 0;
      for (int64_t n = 0; n < samples; ++n) {
        const int64_t row = rowOf(n, c), at = n * sampleSize + c * s.positions;
        const float mean = st.saveMean[row], invstd = st.saveInvstd[row];
        const float* xr = x + at;
        const float* gr = g + at;
        addRun(
            0, s.positions,
            [&](int64_t k) NN_CPU_INLINE { return math::normalizationWeightTerm<double>(xr[k], mean, invstd, gr[k]); },
            weightLanes, weightTail);
        addRun(0, s.positions, [&](int64_t k) NN_CPU_INLINE { return double{gr[k]}; }, biasLanes, biasTail);
      }
      gradWeight[c] += math::normalizationParameterGradient(total(weightLanes, weightTail), scale);
      gradBias[c] += math::normalizationParameterGradient(total(biasLanes, biasTail), scale);
    }
  });
}

void cpuUpdateOutput(const Device& device, const float* x, float* y, const NormalizationShape& s,
                     const NormalizationState& st) {
  if (s.rows == 0 || s.groupSize == 0) return;
  parallelRanges(device, s.rows, grainOf(s.groupSize), [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) outputRow(x, y, s, st, row);
  });
}

void cpuUpdateGradInput(const Device& device, const float* x, const float* g, float* gi, const NormalizationShape& s,
                        const NormalizationState& st) {
  if (s.rows == 0 || s.groupSize == 0) return;
  parallelRanges(device, s.rows, grainOf(s.groupSize), [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) gradInputRow(x, g, gi, s, st, row);
  });
}

void cpuAccGradParameters(const Device& device, const float* x, const float* g, float* gradWeight, float* gradBias,
                          const NormalizationShape& s, const NormalizationState& st, float scale) {
  if (s.rows == 0 || s.groupSize == 0) return;
  const int64_t parameters = s.parameters();
  const int64_t valuesPerParameter = s.rows / s.groups * s.positions;
  parallelRanges(device, parameters, grainOf(valuesPerParameter), [&](int64_t first, int64_t last) {
    parameterGradients(x, g, gradWeight, gradBias, s, st, scale, first, last);
  });
}

}  // namespace

NormalizationKernels normalizationKernels() {
  NormalizationKernels k{};
  k.updateOutput = &cpuUpdateOutput;
  k.updateGradInput = &cpuUpdateGradInput;
  k.accGradParameters = &cpuAccGradParameters;
  return k;
}

}  // namespace nn::cpu

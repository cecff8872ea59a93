// The CPU table of SoftMaxKernels, and the checks SoftMax and LogSoftMax share. Each frame of
// [outer, classes, inner] is walked class by class, so the innermost loop runs over contiguous
// memory, with one running max and sum per column.
#include "nn/SoftMaxKernels.h"

#include <math.h>

#include "nn/KernelTable.h"

namespace nn {

namespace {

// max[i] = the largest of column i of one frame.
void columnMax(const float* in, const math::SoftMaxShape& s, float* max) {
  for (int64_t i = 0; i < s.inner; ++i) max[i] = -INFINITY;
  for (int64_t c = 0; c < s.classes; ++c)
    for (int64_t i = 0; i < s.inner; ++i) max[i] = fmaxf(max[i], in[c * s.inner + i]);
}

void cpuUpdateOutput(const Device&, bool log, const float* x, float* y, const math::SoftMaxShape& s, float* columns) {
  float* max = columns;
  float* sum = columns + s.inner;
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* in = x + o * frame;
    float* out = y + o * frame;
    columnMax(in, s, max);
    for (int64_t i = 0; i < s.inner; ++i) sum[i] = 0.f;
    if (log) {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) sum[i] += math::softMaxExp(in[c * s.inner + i], max[i]);
      // One log per column, not per element.
      for (int64_t i = 0; i < s.inner; ++i) sum[i] = logf(sum[i]);
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          out[c * s.inner + i] = math::logSoftMaxOutput(in[c * s.inner + i], max[i], sum[i]);
    } else {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) {
          const float e = math::softMaxExp(in[c * s.inner + i], max[i]);
          out[c * s.inner + i] = e;
          sum[i] += e;
        }
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) out[c * s.inner + i] = math::softMaxOutput(out[c * s.inner + i], sum[i]);
    }
  }
}

void cpuUpdateGradInput(const Device&, bool log, const float* y, const float* gradOut, float* gradIn,
                        const math::SoftMaxShape& s, float* columns) {
  // Per column: sum_k g_k y_k for softmax, sum_k g_k for log-softmax.
  float* acc = columns;
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* yo = y + o * frame;
    const float* gout = gradOut + o * frame;
    float* gin = gradIn + o * frame;
    for (int64_t i = 0; i < s.inner; ++i) acc[i] = 0.f;
    if (log) {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) acc[i] += gout[c * s.inner + i];
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          gin[c * s.inner + i] = math::logSoftMaxBackward(yo[c * s.inner + i], gout[c * s.inner + i], acc[i]);
    } else {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) acc[i] += gout[c * s.inner + i] * yo[c * s.inner + i];
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          gin[c * s.inner + i] = math::softMaxBackward(yo[c * s.inner + i], gout[c * s.inner + i], acc[i]);
    }
  }
}

constexpr SoftMaxKernels kCpuKernels{&cpuUpdateOutput, &cpuUpdateGradInput};

math::SoftMaxShape shapeOf(const Module& module, const Tensor& input) {
  math::SoftMaxShape s;
  NN_CHECK(math::softMaxShape(input.dim(), input.sizes().data(), &s),
           module.toString() << ": expected input of size [C], [N, C], [C, H, W] or [N, C, H, W], got "
                             << input.shapeString());
  return s;
}

}  // namespace

const SoftMaxKernels& softMaxKernels(const Device& device) {
  return device.isCpu() ? kCpuKernels : KernelTable<SoftMaxKernels>::of(device, "nn.SoftMax");
}

void registerSoftMaxKernels(DeviceType type, const SoftMaxKernels& kernels) {
  KernelTable<SoftMaxKernels>::install(type, kernels);
}

void softMaxUpdateOutput(const Module& module, bool log, const Tensor& input, Tensor& output, Tensor& columns) {
  const math::SoftMaxShape s = shapeOf(module, input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  columns.resize_({2, s.inner}, input.device());
  softMaxKernels(input.device()).updateOutput(input.device(), log, x.rawData(), output.rawData(), s, columns.rawData());
}

void softMaxUpdateGradInput(const Module& module, bool log, const Tensor& input, const Tensor& gradOutput,
                            const Tensor& output, Tensor& gradInput, Tensor& columns) {
  const math::SoftMaxShape s = shapeOf(module, input);
  NN_CHECK(gradOutput.sizes() == input.sizes(), module.toString()
                                                    << ": expected gradOutput of size " << input.shapeString()
                                                    << ", got " << gradOutput.shapeString());
  NN_CHECK(output.sizes() == input.sizes(),
           module.toString() << ": backward needs the output of a forward on this input (" << input.shapeString()
                             << "), found an output of size " << output.shapeString());
  NN_CHECK(gradOutput.device() == output.device(), module.toString()
                                                       << ": expected gradOutput on " << output.device().str()
                                                       << ", got " << gradOutput.device().str());
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  columns.resize_({1, s.inner}, input.device());
  softMaxKernels(input.device())
      .updateGradInput(input.device(), log, output.rawData(), g.rawData(), gradInput.rawData(), s, columns.rawData());
}

}  // namespace nn

// nn::LogSoftMax on the CPU: each frame of [outer, classes, inner] is walked class by class,
// so the innermost loop runs over contiguous memory, with one running max and sum per column.
#include "nn/LogSoftMax.h"

#include <math.h>

#include "nn/math/SoftMax.h"

namespace nn {

NN_REGISTER_MODULE(LogSoftMax);

ModulePtr LogSoftMax::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<LogSoftMax>(); }

namespace {

math::SoftMaxShape shapeOf(const Module& module, const Tensor& input) {
  math::SoftMaxShape s;
  NN_CHECK(math::softMaxShape(input.dim(), input.sizes().data(), &s),
           module.toString() << ": expected input of size [C], [N, C], [C, H, W] or [N, C, H, W], got "
                             << input.shapeString());
  return s;
}

}  // namespace

const Tensor& LogSoftMax::updateOutput(const Tensor& input) {
  const math::SoftMaxShape s = shapeOf(*this, input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  columns_.resize_({2, s.inner}, input.device());
  float* max = columns_.data();
  float* sum = max + s.inner;
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* in = x.data() + o * frame;
    float* out = output.data() + o * frame;
    for (int64_t i = 0; i < s.inner; ++i) {
      max[i] = -INFINITY;
      sum[i] = 0.f;
    }
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i) max[i] = fmaxf(max[i], in[c * s.inner + i]);
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i) sum[i] += math::softMaxExp(in[c * s.inner + i], max[i]);
    // One log per column, not per element.
    for (int64_t i = 0; i < s.inner; ++i) sum[i] = logf(sum[i]);
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i)
        out[c * s.inner + i] = math::logSoftMaxOutput(in[c * s.inner + i], max[i], sum[i]);
  }
  return output;
}

const Tensor& LogSoftMax::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const math::SoftMaxShape s = shapeOf(*this, input);
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  NN_CHECK(output.sizes() == input.sizes(), toString() << ": backward needs the output of a forward on this input ("
                                                       << input.shapeString() << "), found an output of size "
                                                       << output.shapeString());
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  columns_.resize_({1, s.inner}, input.device());
  float* gradSum = columns_.data();
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* y = output.data() + o * frame;
    const float* gout = g.data() + o * frame;
    float* gin = gradInput.data() + o * frame;
    for (int64_t i = 0; i < s.inner; ++i) gradSum[i] = 0.f;
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i) gradSum[i] += gout[c * s.inner + i];
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i)
        gin[c * s.inner + i] = math::logSoftMaxBackward(y[c * s.inner + i], gout[c * s.inner + i], gradSum[i]);
  }
  return gradInput;
}

void LogSoftMax::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
}

}  // namespace nn

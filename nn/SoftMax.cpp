// nn::SoftMax on the CPU: each frame of [outer, classes, inner] is walked class by class,
// so the innermost loop runs over contiguous memory, with one running max and sum per column.
#include "nn/SoftMax.h"

#include <math.h>

#include "nn/math/SoftMax.h"

namespace nn {

NN_REGISTER_MODULE(SoftMax);

ModulePtr SoftMax::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<SoftMax>(); }

namespace {

math::SoftMaxShape shapeOf(const Module& module, const Tensor& input) {
  math::SoftMaxShape s;
  NN_CHECK(math::softMaxShape(input.dim(), input.sizes().data(), &s),
           module.toString() << ": expected input of size [C], [N, C], [C, H, W] or [N, C, H, W], got "
                             << input.shapeString());
  return s;
}

}  // namespace

const Tensor& SoftMax::updateOutput(const Tensor& input) {
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
      for (int64_t i = 0; i < s.inner; ++i) {
        const float e = math::softMaxExp(in[c * s.inner + i], max[i]);
        out[c * s.inner + i] = e;
        sum[i] += e;
      }
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i) out[c * s.inner + i] = math::softMaxOutput(out[c * s.inner + i], sum[i]);
  }
  return output;
}

const Tensor& SoftMax::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const math::SoftMaxShape s = shapeOf(*this, input);
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  NN_CHECK(output.sizes() == input.sizes(), toString() << ": backward needs the output of a forward on this input ("
                                                       << input.shapeString() << "), found an output of size "
                                                       << output.shapeString());
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  columns_.resize_({1, s.inner}, input.device());
  float* dot = columns_.data();
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* y = output.data() + o * frame;
    const float* gout = g.data() + o * frame;
    float* gin = gradInput.data() + o * frame;
    for (int64_t i = 0; i < s.inner; ++i) dot[i] = 0.f;
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i) dot[i] += gout[c * s.inner + i] * y[c * s.inner + i];
    for (int64_t c = 0; c < s.classes; ++c)
      for (int64_t i = 0; i < s.inner; ++i)
        gin[c * s.inner + i] = math::softMaxBackward(y[c * s.inner + i], gout[c * s.inner + i], dot[i]);
  }
  return gradInput;
}

void SoftMax::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
}

}  // namespace nn

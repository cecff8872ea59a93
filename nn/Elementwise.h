// Loops for element-wise modules: out[i] = f(in[i]) and gradIn[i] = g(in[i], out[i], gradOut[i]).
// The formula f or g comes from nn/math; these loops only index.
#pragma once

#include "nn/Module.h"

namespace nn::elementwise {

/// Resizes `output` like `input` and sets output[i] = f(input[i]). Pass f as a lambda, not a
/// function pointer, so that the compiler inlines and vectorises it.
template <typename F>
void forward(const Tensor& input, Tensor& output, F f) {
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  const float* in = x.data();
  float* out = output.data();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = f(in[i]);
}

/// input[i] = f(input[i]), for in-place modules; input must be contiguous (naming `module`).
template <typename F>
void forwardInPlace(const Module& module, const Tensor& input, F f) {
  NN_CHECK(input.isContiguous(), module.toString() << ": works in place, so it expects a contiguous input, got "
                                                   << input.shapeString() << " with other strides");
  float* x = input.data();
  for (int64_t i = 0, n = input.numel(); i < n; ++i) x[i] = f(x[i]);
}

/// gradOutput[i] = g(output[i], gradOutput[i]), for in-place modules: checks sizes and
/// contiguity, naming `module`.
template <typename G>
void backwardInPlace(const Module& module, const Tensor& output, const Tensor& gradOutput, G g) {
  NN_CHECK(gradOutput.sizes() == output.sizes() && gradOutput.device() == output.device(),
           module.toString() << ": expected gradOutput of size " << output.shapeString() << " on "
                             << output.device().str() << ", got " << gradOutput.shapeString() << " on "
                             << gradOutput.device().str());
  NN_CHECK(gradOutput.isContiguous(), module.toString() << ": works in place, so it expects a contiguous gradOutput");
  const float* out = output.data();
  float* gout = gradOutput.data();
  for (int64_t i = 0, n = output.numel(); i < n; ++i) gout[i] = g(out[i], gout[i]);
}

/// Checks gradOutput's sizes (naming `module`), resizes gradInput like input and sets
/// gradInput[i] = g(input[i], output[i], gradOutput[i]).
template <typename G>
void backward(const Module& module, const Tensor& input, const Tensor& output, const Tensor& gradOutput,
              Tensor& gradInput, G g) {
  NN_CHECK(gradOutput.sizes() == input.sizes(), module.toString()
                                                    << ": expected gradOutput of size " << input.shapeString()
                                                    << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(), module.toString()
                                                      << ": expected gradOutput on " << input.device().str() << ", got "
                                                      << gradOutput.device().str());
  NN_CHECK(output.sizes() == input.sizes(), module.toString() << ": backward needs the output of a forward on "
                                                              << "this input (" << input.shapeString()
                                                              << "), found an output of size " << output.shapeString());
  const Tensor x = input.contiguous();
  const Tensor go = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const float* in = x.data();
  const float* out = output.data();
  const float* gout = go.data();
  float* gin = gradInput.data();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) gin[i] = g(in[i], out[i], gout[i]);
}

}  // namespace nn::elementwise

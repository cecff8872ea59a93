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

// The module side of element-wise activations (ReLU, Tanh, Sigmoid): shape and device
// checks and buffer sizes, then one call to the ElementwiseKernels of the input's device.
#pragma once

#include "nn/ElementwiseKernels.h"
#include "nn/Module.h"

namespace nn::elementwise {

/// Resizes `output` like `input` on its device and sets output[i] = f(input[i]).
void forward(Activation activation, const Tensor& input, Tensor& output);
/// input[i] = f(input[i]), for in-place modules; input must be contiguous (naming `module`).
void forwardInPlace(const Module& module, Activation activation, const Tensor& input);
/// Checks gradOutput and output against input (naming `module`), resizes gradInput like
/// input and sets it from the formula's derivative.
void backward(const Module& module, Activation activation, const Tensor& input, const Tensor& output,
              const Tensor& gradOutput, Tensor& gradInput);
/// gradOutput[i] *= the derivative at output[i], for in-place modules whose input was
/// overwritten by `output`; checks sizes, devices and contiguity, naming `module`.
void backwardInPlace(const Module& module, Activation activation, const Tensor& output, const Tensor& gradOutput);

}  // namespace nn::elementwise

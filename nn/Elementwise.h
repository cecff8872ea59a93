// The module side of element-wise activations: shape and device checks and buffer sizes, then
// one call to an entry of the ElementwiseKernels of the input's device. `entry` names the
// activation's entry (&ElementwiseKernels::relu), `args` its parameter block.
#pragma once

#include "nn/Module.h"
#include "nn/backend/ElementwiseKernels.h"

namespace nn::elementwise {

using Entry = ActivationKernels ElementwiseKernels::*;

/// Resizes `output` like `input` on its device and sets output[i] = f(input[i]).
void forward(Entry entry, const math::ActivationArgs& args, const Tensor& input, Tensor& output);
/// input[i] = f(input[i]), for in-place modules; input must be contiguous (naming `module`).
void forwardInPlace(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& input);
/// Checks gradOutput and output against input (naming `module`), resizes gradInput like
/// input and sets it from the formula's derivative.
void backward(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& input,
              const Tensor& output, const Tensor& gradOutput, Tensor& gradInput);
/// gradOutput[i] *= the derivative at output[i], for in-place modules whose input was
/// overwritten by `output` (the formula reads the output for the input: kInPlace); checks
/// sizes, devices and contiguity, naming `module`.
void backwardInPlace(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& output,
                     const Tensor& gradOutput);

}  // namespace nn::elementwise

// The passes that nn::SoftMax and nn::LogSoftMax share: shape checks, buffers, and the call to
// the SoftMaxKernels of the input's device.
#pragma once

#include "nn/core/Module.h"

namespace nn {

/// The updateOutput of SoftMax (log false) and LogSoftMax (log true): checks the input's rank
/// (an nn::Error naming `module`), sizes output and the scratch `columns`, calls the table.
void softMaxUpdateOutput(const Module& module, bool log, const Tensor& input, Tensor& output, Tensor& columns);
/// Their updateGradInput, from the output of the forward on `input`.
void softMaxUpdateGradInput(const Module& module, bool log, const Tensor& input, const Tensor& gradOutput,
                            const Tensor& output, Tensor& gradInput, Tensor& columns);

}  // namespace nn

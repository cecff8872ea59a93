// The passes of SoftMax and LogSoftMax: their checks and buffers, then one call to the
// SoftMaxKernels of the input's device.
#include "nn/modules/SoftMaxPasses.h"

#include "nn/backend/Backend.h"

namespace nn {

namespace {

math::SoftMaxShape shapeOf(const Module& module, const Tensor& input) {
  math::SoftMaxShape s;
  NN_CHECK(math::softMaxShape(input.dim(), input.sizes().data(), &s),
           module.toString() << ": expected input of size [C], [N, C], [C, H, W] or [N, C, H, W], got "
                             << input.shapeString());
  return s;
}

}  // namespace

void softMaxUpdateOutput(const Module& module, bool log, const Tensor& input, Tensor& output, Tensor& columns) {
  const math::SoftMaxShape s = shapeOf(module, input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  columns.resize_({2, s.inner}, input.device());
  kernelsOf(input.device())
      .softMax.updateOutput(input.device(), log, x.rawData(), output.rawData(), s, columns.rawData());
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
  kernelsOf(input.device())
      .softMax.updateGradInput(input.device(), log, output.rawData(), g.rawData(), gradInput.rawData(), s,
                               columns.rawData());
}

}  // namespace nn

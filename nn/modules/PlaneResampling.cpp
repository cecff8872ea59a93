// nn::PlaneResampling: the shapes and checks here, the loops in PoolingKernels.
#include "nn/modules/PlaneResampling.h"

#include "nn/backend/Backend.h"

namespace nn {

PoolingShape PlaneResampling::shapeOf(const Tensor& input) {
  const int d = input.dim();
  NN_CHECK((d == 3 || d == 4) && input.numel() > 0,
           toString() << ": expected non-empty input of size [batch, planes, height, width] or [planes, height, "
                      << "width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  const auto [outHeight, outWidth] = outputSize(input, height, width);
  sizes_.assign(input.sizes().begin(), input.sizes().end());
  sizes_[d - 2] = outHeight;
  sizes_[d - 1] = outWidth;
  PoolingShape s{};
  s.planes = input.numel() / (height * width);
  s.height = height;
  s.width = width;
  s.outHeight = outHeight;
  s.outWidth = outWidth;
  return s;
}

const Tensor& PlaneResampling::updateOutput(const Tensor& input) {
  const PoolingShape s = shapeOf(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  output.resize_(sizes_, input.device());
  (kernelsOf(input.device()).pooling.*entry_).forward(input.device(), s, x.rawData(), output.rawData());
  return output;
}

const Tensor& PlaneResampling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = shapeOf(input);
  checkGradOutput(input, sizes_, gradOutput);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  gradInput.resize_(input.sizes(), input.device());
  (kernelsOf(input.device()).pooling.*entry_).backward(input.device(), s, g.rawData(), gradInput.rawData());
  return gradInput;
}

void PlaneResampling::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn

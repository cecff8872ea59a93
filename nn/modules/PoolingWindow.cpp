// nn::PoolingWindow: the argument and input checks, output sizes and description that the
// spatial pooling modules share.
#include "nn/modules/PoolingWindow.h"

#include <algorithm>

#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

void PoolingWindow::check(const char* module) const {
  NN_CHECK(kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0,
           module << ": expected a positive kernel and stride and non-negative padding, got kernel " << kW << "x" << kH
                  << ", stride " << dW << "," << dH << ", padding " << padW << "," << padH);
  NN_CHECK(padW <= kW / 2 && padH <= kH / 2, module << ": expected padding at most half the kernel (" << kW / 2 << ","
                                                    << kH / 2 << "), got " << padW << "," << padH);
  // A window of at most kMaxElements cells moved by at most that many: the output sizes, window
  // bounds and divisors (nn/math/Pooling.h) of any input then stay far from overflow.
  int64_t cells = 0;
  NN_CHECK(isExtent(dW) && isExtent(dH) && mulInto(kW, kH, cells) && cells <= kMaxElements,
           module << ": expected a kernel of at most " << kMaxElements << " cells and strides of at most "
                  << kMaxElements << ", got kernel " << kW << "x" << kH << ", stride " << dW << "," << dH);
}

PoolingShape PoolingWindow::shapeOf(const Tensor& input, const Module& who) const {
  const int d = input.dim();
  NN_CHECK(d == 3 || d == 4, who.toString() << ": expected input of size [batch, planes, height, width] or [planes, "
                                            << "height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  NN_CHECK(height > 0 && width > 0 && height + 2 * padH >= kH && width + 2 * padW >= kW,
           who.toString() << ": expected input height at least " << std::max<int64_t>(kH - 2 * padH, 1)
                          << " and width at least " << std::max<int64_t>(kW - 2 * padW, 1)
                          << " (the kernel, less the padding), got " << input.shapeString());
  return poolingShape(d == 4 ? input.size(0) * input.size(1) : input.size(0), height, width, kH, kW, dH, dW, padH, padW,
                      ceilMode);
}

void PoolingWindow::resizeLikeOutput(Tensor& t, const Tensor& input, const PoolingShape& s) const {
  if (input.dim() == 4)
    t.resize_({input.size(0), input.size(1), s.outHeight, s.outWidth}, input.device());
  else
    t.resize_({input.size(0), s.outHeight, s.outWidth}, input.device());
}

void PoolingWindow::checkGradOutput(const Tensor& input, const Tensor& gradOutput, const PoolingShape& s,
                                    const Module& who) const {
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({input.size(0), input.size(1), s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({input.size(0), s.outHeight, s.outWidth});
  NN_CHECK(ok, who.toString() << ": expected gradOutput of size ["
                              << (input.dim() == 4 ? std::to_string(input.size(0)) + ", " : "")
                              << input.size(input.dim() - 3) << ", " << s.outHeight << ", " << s.outWidth
                              << "] for input " << input.shapeString() << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(), who.toString() << ": expected gradOutput on " << input.device().str()
                                                                 << ", got " << gradOutput.device().str());
}

std::string PoolingWindow::describe() const {
  std::string s = std::to_string(kW) + "x" + std::to_string(kH) + ", " + std::to_string(dW) + "," + std::to_string(dH);
  if (padW != 0 || padH != 0) s += ", " + std::to_string(padW) + "," + std::to_string(padH);
  return s;
}

}  // namespace nn

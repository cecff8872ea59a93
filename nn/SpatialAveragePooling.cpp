// nn::SpatialAveragePooling: shapes and buffers here, the work in PoolingKernels
// (nn/PoolingKernels.h): window means, and their gradient spread back evenly.
#include "nn/SpatialAveragePooling.h"

#include <algorithm>

#include "nn/math/Pooling.h"

namespace nn {

NN_REGISTER_MODULE(SpatialAveragePooling);

SpatialAveragePooling::SpatialAveragePooling(int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH)
    : kW_(kW), kH_(kH), dW_(dW), dH_(dH), padW_(padW), padH_(padH) {
  NN_CHECK(kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0,
           "nn.SpatialAveragePooling: expected a positive kernel and stride and non-negative padding, got kernel "
               << kW << "x" << kH << ", stride " << dW << "," << dH << ", padding " << padW << "," << padH);
  NN_CHECK(padW <= kW / 2 && padH <= kH / 2, "nn.SpatialAveragePooling: expected padding at most half the kernel ("
                                                 << kW / 2 << "," << kH / 2 << "), got " << padW << "," << padH);
}

ModulePtr SpatialAveragePooling::create(const Config& c, std::vector<ModulePtr>) {
  auto m = std::make_shared<SpatialAveragePooling>(c.integer("kW"), c.integer("kH"), c.integer("dW"), c.integer("dH"),
                                                   c.integer("padW"), c.integer("padH"));
  if (c.flag("ceilMode")) m->ceil();
  if (!c.flag("countIncludePad")) m->setCountExcludePad();
  return m;
}

Config SpatialAveragePooling::config() const {
  return Config()
      .set("kW", kW_)
      .set("kH", kH_)
      .set("dW", dW_)
      .set("dH", dH_)
      .set("padW", padW_)
      .set("padH", padH_)
      .set("ceilMode", ceilMode_)
      .set("countIncludePad", countIncludePad_);
}

SpatialAveragePooling& SpatialAveragePooling::ceil() {
  ceilMode_ = true;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::floor() {
  ceilMode_ = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountExcludePad() {
  countIncludePad_ = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountIncludePad() {
  countIncludePad_ = true;
  return *this;
}

std::string SpatialAveragePooling::toString() const {
  std::string s = "nn.SpatialAveragePooling(" + std::to_string(kW_) + "x" + std::to_string(kH_) + ", " +
                  std::to_string(dW_) + "," + std::to_string(dH_);
  if (padW_ != 0 || padH_ != 0) s += ", " + std::to_string(padW_) + "," + std::to_string(padH_);
  return s + ")";
}

PoolingShape SpatialAveragePooling::checkInput(const Tensor& input) const {
  const int d = input.dim();
  NN_CHECK(d == 3 || d == 4, toString() << ": expected input of size [batch, planes, height, width] or [planes, "
                                        << "height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  NN_CHECK(height > 0 && width > 0 && height + 2 * padH_ >= kH_ && width + 2 * padW_ >= kW_,
           toString() << ": expected input height at least " << std::max<int64_t>(kH_ - 2 * padH_, 1)
                      << " and width at least " << std::max<int64_t>(kW_ - 2 * padW_, 1)
                      << " (the kernel, less the padding), got " << input.shapeString());
  return poolingShape(d == 4 ? input.size(0) * input.size(1) : input.size(0), height, width, kH_, kW_, dH_, dW_, padH_,
                      padW_, ceilMode_);
}

const Tensor& SpatialAveragePooling::updateOutput(const Tensor& input) {
  const PoolingShape s = checkInput(input);
  const Tensor x = input.contiguous();
  if (input.dim() == 4)
    output.resize_({input.size(0), input.size(1), s.outHeight, s.outWidth}, input.device());
  else
    output.resize_({input.size(0), s.outHeight, s.outWidth}, input.device());
  poolingKernels(input.device())
      .averageUpdateOutput(input.device(), s, countIncludePad_, x.rawData(), output.rawData());
  return output;
}

const Tensor& SpatialAveragePooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = checkInput(input);
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({input.size(0), input.size(1), s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({input.size(0), s.outHeight, s.outWidth});
  NN_CHECK(ok, toString() << ": expected gradOutput of size ["
                          << (input.dim() == 4 ? std::to_string(input.size(0)) + ", " : "")
                          << input.size(input.dim() - 3) << ", " << s.outHeight << ", " << s.outWidth << "] for input "
                          << input.shapeString() << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(),
           toString() << ": expected gradOutput on " << input.device().str() << ", got " << gradOutput.device().str());
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  poolingKernels(input.device())
      .averageUpdateGradInput(input.device(), s, countIncludePad_, g.rawData(), gradInput.rawData());
  return gradInput;
}

}  // namespace nn

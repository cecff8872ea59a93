// nn::SpatialMaxPooling: shapes and buffers here, the work in PoolingKernels (nn/PoolingKernels.h).
#include "nn/SpatialMaxPooling.h"

#include <algorithm>

#include "nn/math/Pooling.h"

namespace nn {

NN_REGISTER_MODULE(SpatialMaxPooling);

// Indices are stored as floats, exact up to 2^24.
static constexpr int64_t kMaxPlaneSize = int64_t{1} << 24;

SpatialMaxPooling::SpatialMaxPooling(int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH)
    : kW_(kW), kH_(kH), dW_(dW == 0 ? kW : dW), dH_(dH == 0 ? kH : dH), padW_(padW), padH_(padH) {
  NN_CHECK(kW > 0 && kH > 0 && dW >= 0 && dH >= 0 && padW >= 0 && padH >= 0,
           "nn.SpatialMaxPooling: expected a positive kernel, a non-negative stride and padding, got kernel "
               << kW << "x" << kH << ", stride " << dW << "," << dH << ", padding " << padW << "," << padH);
  NN_CHECK(padW <= kW / 2 && padH <= kH / 2, "nn.SpatialMaxPooling: expected padding at most half the kernel ("
                                                 << kW / 2 << "," << kH / 2 << "), got " << padW << "," << padH);
}

ModulePtr SpatialMaxPooling::create(const Config& c, std::vector<ModulePtr>) {
  auto m = std::make_shared<SpatialMaxPooling>(c.integer("kW"), c.integer("kH"), c.integer("dW"), c.integer("dH"),
                                               c.integer("padW"), c.integer("padH"));
  if (c.flag("ceilMode")) m->ceil();
  return m;
}

Config SpatialMaxPooling::config() const {
  return Config()
      .set("kW", kW_)
      .set("kH", kH_)
      .set("dW", dW_)
      .set("dH", dH_)
      .set("padW", padW_)
      .set("padH", padH_)
      .set("ceilMode", ceilMode_);
}

SpatialMaxPooling& SpatialMaxPooling::ceil() {
  ceilMode_ = true;
  return *this;
}

SpatialMaxPooling& SpatialMaxPooling::floor() {
  ceilMode_ = false;
  return *this;
}

std::string SpatialMaxPooling::toString() const {
  std::string s = "nn.SpatialMaxPooling(" + std::to_string(kW_) + "x" + std::to_string(kH_) + ", " +
                  std::to_string(dW_) + "," + std::to_string(dH_);
  if (padW_ != 0 || padH_ != 0) s += ", " + std::to_string(padW_) + "," + std::to_string(padH_);
  return s + ")";
}

PoolingShape SpatialMaxPooling::checkInput(const Tensor& input) const {
  const int d = input.dim();
  NN_CHECK(d == 3 || d == 4, toString() << ": expected input of size [batch, planes, height, width] or [planes, "
                                        << "height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  NN_CHECK(height > 0 && width > 0 && height + 2 * padH_ >= kH_ && width + 2 * padW_ >= kW_,
           toString() << ": expected input height at least " << std::max<int64_t>(kH_ - 2 * padH_, 1)
                      << " and width at least " << std::max<int64_t>(kW_ - 2 * padW_, 1)
                      << " (the kernel, less the padding), got " << input.shapeString());
  NN_CHECK(height * width <= kMaxPlaneSize, toString() << ": expected input planes of at most " << kMaxPlaneSize
                                                       << " cells, got " << input.shapeString());
  return poolingShape(d == 4 ? input.size(0) * input.size(1) : input.size(0), height, width, kH_, kW_, dH_, dW_, padH_,
                      padW_, ceilMode_);
}

void SpatialMaxPooling::resizeLikeOutput(Tensor& t, const Tensor& input, const PoolingShape& s) const {
  if (input.dim() == 4)
    t.resize_({input.size(0), input.size(1), s.outHeight, s.outWidth}, input.device());
  else
    t.resize_({input.size(0), s.outHeight, s.outWidth}, input.device());
}

const Tensor& SpatialMaxPooling::updateOutput(const Tensor& input) {
  const PoolingShape s = checkInput(input);
  const Tensor x = input.contiguous();
  resizeLikeOutput(output, input, s);
  resizeLikeOutput(indices, input, s);
  poolingKernels(input.device()).maxUpdateOutput(input.device(), s, x.rawData(), output.rawData(), indices.rawData());
  return output;
}

const Tensor& SpatialMaxPooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = checkInput(input);
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({input.size(0), input.size(1), s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({input.size(0), s.outHeight, s.outWidth});
  NN_CHECK(ok, toString() << ": expected gradOutput of size ["
                          << (input.dim() == 4 ? std::to_string(input.size(0)) + ", " : "")
                          << input.size(input.dim() - 3) << ", " << s.outHeight << ", " << s.outWidth << "] for input "
                          << input.shapeString() << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(),
           toString() << ": expected gradOutput on " << input.device().str() << ", got " << gradOutput.device().str());
  NN_CHECK(indices.sizes() == gradOutput.sizes() && indices.device() == input.device(),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const bool found = poolingKernels(input.device())
                         .maxUpdateGradInput(input.device(), s, g.rawData(), indices.rawData(), gradInput.rawData());
  NN_CHECK(found, toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  return gradInput;
}

void SpatialMaxPooling::clearState() {
  Module::clearState();
  indices.set_(Tensor());
}

}  // namespace nn

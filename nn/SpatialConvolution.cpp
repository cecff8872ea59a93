// nn::SpatialConvolution on the CPU: im2col of the whole batch, then one GEMM per product.
#include "nn/SpatialConvolution.h"

#include <algorithm>
#include <cmath>

#include "nn/Blas.h"
#include "nn/Random.h"
#include "nn/math/Im2Col.h"

namespace nn {

NN_REGISTER_MODULE(SpatialConvolution);

SpatialConvolution::SpatialConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW,
                                       int64_t dH, int64_t padW, int64_t padH)
    : nInputPlane_(nInputPlane),
      nOutputPlane_(nOutputPlane),
      kW_(kW),
      kH_(kH),
      dW_(dW),
      dH_(dH),
      padW_(padW),
      padH_(padH) {
  NN_CHECK(nInputPlane > 0 && nOutputPlane > 0 && kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0,
           "nn.SpatialConvolution: expected positive planes, kernel and stride and non-negative padding, got "
               << nInputPlane << " -> " << nOutputPlane << ", kernel " << kW << "x" << kH << ", stride " << dW << ","
               << dH << ", padding " << padW << "," << padH);
  weight.resize_({nOutputPlane, nInputPlane, kH, kW});
  gradWeight = Tensor::zeros({nOutputPlane, nInputPlane, kH, kW});
  registerParameter("weight", &weight, &gradWeight);
  bias.resize_({nOutputPlane});
  gradBias = Tensor::zeros({nOutputPlane});
  registerParameter("bias", &bias, &gradBias);
  reset();
}

ModulePtr SpatialConvolution::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<SpatialConvolution>(c.integer("nInputPlane"), c.integer("nOutputPlane"), c.integer("kW"),
                                              c.integer("kH"), c.integer("dW"), c.integer("dH"), c.integer("padW"),
                                              c.integer("padH"));
}

Config SpatialConvolution::config() const {
  return Config()
      .set("nInputPlane", nInputPlane_)
      .set("nOutputPlane", nOutputPlane_)
      .set("kW", kW_)
      .set("kH", kH_)
      .set("dW", dW_)
      .set("dH", dH_)
      .set("padW", padW_)
      .set("padH", padH_);
}

void SpatialConvolution::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(kW_ * kH_ * nInputPlane_));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  bias.uniform_(defaultGenerator(), -stdv, stdv);
}

std::string SpatialConvolution::toString() const {
  std::string s = "nn.SpatialConvolution(" + std::to_string(nInputPlane_) + " -> " + std::to_string(nOutputPlane_) +
                  ", " + std::to_string(kW_) + "x" + std::to_string(kH_);
  const bool padded = padW_ != 0 || padH_ != 0;
  if (dW_ != 1 || dH_ != 1 || padded) s += ", " + std::to_string(dW_) + "," + std::to_string(dH_);
  if (padded) s += ", " + std::to_string(padW_) + "," + std::to_string(padH_);
  return s + ")";
}

SpatialConvolution::Shape SpatialConvolution::checkInput(const Tensor& input) const {
  const int d = input.dim();
  NN_CHECK((d == 3 || d == 4) && input.size(d - 3) == nInputPlane_,
           toString() << ": expected input of size [batch, " << nInputPlane_ << ", height, width] or [" << nInputPlane_
                      << ", height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  NN_CHECK(height > 0 && width > 0 && height + 2 * padH_ >= kH_ && width + 2 * padW_ >= kW_,
           toString() << ": expected input height at least " << std::max<int64_t>(kH_ - 2 * padH_, 1)
                      << " and width at least " << std::max<int64_t>(kW_ - 2 * padW_, 1)
                      << " (the kernel, less the padding), got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
  return Shape{d == 4 ? input.size(0) : 1,
               nInputPlane_,
               height,
               width,
               kH_,
               kW_,
               dH_,
               dW_,
               padH_,
               padW_,
               math::convOutputSize(height, kH_, dH_, padH_),
               math::convOutputSize(width, kW_, dW_, padW_)};
}

void SpatialConvolution::checkGradOutput(const Tensor& gradOutput, const Tensor& input, const Shape& s) const {
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({s.batch, nOutputPlane_, s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({nOutputPlane_, s.outHeight, s.outWidth});
  NN_CHECK(ok, toString() << ": expected gradOutput of size "
                          << (input.dim() == 4 ? "[" + std::to_string(s.batch) + ", " : "[") << nOutputPlane_ << ", "
                          << s.outHeight << ", " << s.outWidth << "] for input " << input.shapeString() << ", got "
                          << gradOutput.shapeString());
  checkDevice(gradOutput, weight.device(), "gradOutput");
}

void SpatialConvolution::im2col(const Shape& s, const float* input, float* columns) {
  const int64_t positions = s.positions(), stride = s.columns();
  for (int64_t c = 0; c < s.planes; ++c)
    for (int64_t ky = 0; ky < s.kH; ++ky) {
      const int64_t yFirst = math::convFirstInside(ky, s.dH, s.padH, s.outHeight);
      const int64_t yEnd = math::convEndInside(s.height, ky, s.dH, s.padH, s.outHeight);
      for (int64_t kx = 0; kx < s.kW; ++kx) {
        const int64_t xFirst = math::convFirstInside(kx, s.dW, s.padW, s.outWidth);
        const int64_t xEnd = math::convEndInside(s.width, kx, s.dW, s.padW, s.outWidth);
        float* row = columns + math::im2colRow(c, ky, kx, s.kH, s.kW) * stride;
        for (int64_t n = 0; n < s.batch; ++n) {
          const float* plane = input + (n * s.planes + c) * s.height * s.width;
          float* out = row + n * positions;
          for (int64_t oy = 0; oy < s.outHeight; ++oy, out += s.outWidth) {
            if (oy < yFirst || oy >= yEnd) {
              std::fill(out, out + s.outWidth, 0.f);
              continue;
            }
            const float* src = plane + math::convInputCoord(oy, ky, s.dH, s.padH) * s.width +
                               math::convInputCoord(xFirst, kx, s.dW, s.padW);
            std::fill(out, out + xFirst, 0.f);
            if (s.dW == 1)  // the common case: a plain copy, which vectorises
              std::copy(src, src + (xEnd - xFirst), out + xFirst);
            else
              for (int64_t ox = xFirst; ox < xEnd; ++ox) out[ox] = src[(ox - xFirst) * s.dW];
            std::fill(out + xEnd, out + s.outWidth, 0.f);
          }
        }
      }
    }
}

void SpatialConvolution::col2im(const Shape& s, const float* columns, float* gradInput) {
  const int64_t positions = s.positions(), stride = s.columns();
  for (int64_t c = 0; c < s.planes; ++c)
    for (int64_t ky = 0; ky < s.kH; ++ky) {
      const int64_t yFirst = math::convFirstInside(ky, s.dH, s.padH, s.outHeight);
      const int64_t yEnd = math::convEndInside(s.height, ky, s.dH, s.padH, s.outHeight);
      for (int64_t kx = 0; kx < s.kW; ++kx) {
        const int64_t xFirst = math::convFirstInside(kx, s.dW, s.padW, s.outWidth);
        const int64_t xEnd = math::convEndInside(s.width, kx, s.dW, s.padW, s.outWidth);
        const float* row = columns + math::im2colRow(c, ky, kx, s.kH, s.kW) * stride;
        for (int64_t n = 0; n < s.batch; ++n) {
          float* plane = gradInput + (n * s.planes + c) * s.height * s.width;
          const float* in = row + n * positions;
          for (int64_t oy = yFirst; oy < yEnd; ++oy) {
            float* dst = plane + math::convInputCoord(oy, ky, s.dH, s.padH) * s.width +
                         math::convInputCoord(xFirst, kx, s.dW, s.padW);
            const float* src = in + oy * s.outWidth + xFirst;
            if (s.dW == 1)  // unit strides on both sides, which vectorises
              for (int64_t i = 0; i < xEnd - xFirst; ++i) dst[i] += src[i];
            else
              for (int64_t i = 0; i < xEnd - xFirst; ++i) dst[i * s.dW] += src[i];
          }
        }
      }
    }
}

const Tensor& SpatialConvolution::updateOutput(const Tensor& input) {
  const Shape s = checkInput(input);
  const Tensor x = input.contiguous();
  if (input.dim() == 4)
    output.resize_({s.batch, nOutputPlane_, s.outHeight, s.outWidth}, input.device());
  else
    output.resize_({nOutputPlane_, s.outHeight, s.outWidth}, input.device());
  const int64_t rows = s.rows(), cols = s.columns(), positions = s.positions();
  columns_.resize_({rows, cols}, input.device());
  im2col(s, x.data(), columns_.data());
  outputColumns_.resize_({nOutputPlane_, cols}, input.device());
  // outputColumns[out, batch * positions] = W[out, rows] * columns[rows, batch * positions]
  blas::gemm(false, false, nOutputPlane_, cols, rows, 1.f, weight.data(), rows, columns_.data(), cols, 0.f,
             outputColumns_.data(), cols);
  const float* b = bias.data();
  const float* oc = outputColumns_.data();
  float* y = output.data();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t o = 0; o < nOutputPlane_; ++o) {
      const float* src = oc + o * cols + n * positions;
      float* dst = y + (n * nOutputPlane_ + o) * positions;
      for (int64_t p = 0; p < positions; ++p) dst[p] = src[p] + b[o];
    }
  return output;
}

void SpatialConvolution::gatherGradOutput(const Tensor& gradOutput, const Shape& s) {
  const int64_t cols = s.columns(), positions = s.positions();
  outputColumns_.resize_({nOutputPlane_, cols}, gradOutput.device());
  const float* g = gradOutput.data();
  float* oc = outputColumns_.data();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t o = 0; o < nOutputPlane_; ++o)
      std::copy(g + (n * nOutputPlane_ + o) * positions, g + (n * nOutputPlane_ + o + 1) * positions,
                oc + o * cols + n * positions);
}

const Tensor& SpatialConvolution::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const Shape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  gatherGradOutput(gradOutput.contiguous(), s);
  const int64_t rows = s.rows(), cols = s.columns();
  gradColumns_.resize_({rows, cols}, input.device());
  // gradColumns[rows, batch * positions] = W[out, rows]^T * gradOutputColumns[out, batch * positions]
  blas::gemm(true, false, rows, cols, nOutputPlane_, 1.f, weight.data(), rows, outputColumns_.data(), cols, 0.f,
             gradColumns_.data(), cols);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  col2im(s, gradColumns_.data(), gradInput.data());
  return gradInput;
}

void SpatialConvolution::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const Shape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  const int64_t rows = s.rows(), cols = s.columns();
  NN_CHECK(columns_.hasSizes({rows, cols}),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor g = gradOutput.contiguous();
  gatherGradOutput(g, s);
  // gradWeight[out, rows] += scale * gradOutputColumns[out, batch * positions] * columns[rows, batch * positions]^T
  blas::gemm(false, true, nOutputPlane_, rows, cols, scale, outputColumns_.data(), cols, columns_.data(), cols, 1.f,
             gradWeight.data(), rows);
  float* gb = gradBias.data();
  const float* oc = outputColumns_.data();
  for (int64_t o = 0; o < nOutputPlane_; ++o) {
    double sum = 0;
    for (int64_t i = 0; i < cols; ++i) sum += oc[o * cols + i];
    gb[o] += scale * static_cast<float>(sum);
  }
}

void SpatialConvolution::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
  outputColumns_.set_(Tensor());
  gradColumns_.set_(Tensor());
}

}  // namespace nn

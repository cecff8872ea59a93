// nn::SpatialConvolution on the CPU: im2col of a chunk of samples at a time, then one GEMM per
// sample.
#include "nn/SpatialConvolution.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "nn/Blas.h"
#include "nn/Random.h"
#include "nn/math/Im2Col.h"

namespace nn {

NN_REGISTER_MODULE(SpatialConvolution);

namespace {

// Unfolded input per chunk: small enough to stay in a core's L2 cache (1 to 2 MB) between
// im2col and the GEMMs that read it. LeNet's layers train equally fast with chunks of one
// sample up to 512 KB, 5 to 10% slower at 1 MB, and twice as slow with the whole batch of 128
// (16 MB) unfolded at once.
constexpr int64_t kChunkBytes = int64_t{256} << 10;

// The rows that im2col and col2im move are a few dozen floats long. Blocks of 8 compile to
// vector moves; std::copy or a plain loop would become a call to memmove for every row.
inline void copyRow(const float* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(float));
  for (; i < n; ++i) dst[i] = src[i];
}

inline void fillRow(float* dst, int64_t n, float value) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int64_t j = 0; j < 8; ++j) dst[i + j] = value;
  for (; i < n; ++i) dst[i] = value;
}

inline void addEight(const float* __restrict src, float* __restrict dst) {
  for (int64_t j = 0; j < 8; ++j) dst[j] += src[j];
}

inline void addRow(const float* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) addEight(src + i, dst + i);
  for (; i < n; ++i) dst[i] += src[i];
}

// One input plane without padding and with stride 1, unfolded (folded back, adding) whole rows at
// a time: tap (ky, kx)'s row of the column matrix, `tapStride` floats after the previous tap's, is
// the plane's outH x outW block at (ky, kx). Width is outW where it is one of the common widths
// (multiples of 8), so that a row is a fixed number of vector moves (the loop control of a run-time
// length costs as much as the copy), and 0 where it is not.
template <int64_t Width>
void unfoldPlane(const float* plane, int64_t width, int64_t kH, int64_t kW, int64_t outH, int64_t outW, float* columns,
                 int64_t tapStride) {
  const int64_t length = Width != 0 ? Width : outW;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx) {
      const float* src = plane + ky * width + kx;
      float* dst = columns + math::im2colRow(0, ky, kx, kH, kW) * tapStride;
      for (int64_t oy = 0; oy < outH; ++oy, src += width, dst += length)
        if constexpr (Width != 0)
          for (int64_t i = 0; i < Width; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(float));
        else
          copyRow(src, dst, length);
    }
}

template <int64_t Width>
void foldPlane(const float* columns, int64_t tapStride, int64_t width, int64_t kH, int64_t kW, int64_t outH,
               int64_t outW, float* plane) {
  const int64_t length = Width != 0 ? Width : outW;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx) {
      const float* src = columns + math::im2colRow(0, ky, kx, kH, kW) * tapStride;
      float* dst = plane + ky * width + kx;
      for (int64_t oy = 0; oy < outH; ++oy, src += length, dst += width)
        if constexpr (Width != 0)
          for (int64_t i = 0; i < Width; i += 8) addEight(src + i, dst + i);
        else
          addRow(src, dst, length);
    }
}

// Sum of a plane: eight float lanes, which vectorise, then a double total.
inline double sumRow(const float* src, int64_t n) {
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int64_t j = 0; j < 8; ++j) lanes[j] += src[i + j];
  double sum = 0;
  for (int64_t j = 0; j < 8; ++j) sum += lanes[j];
  for (; i < n; ++i) sum += src[i];
  return sum;
}

}  // namespace

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
  Shape s{d == 4 ? input.size(0) : 1,
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
          math::convOutputSize(width, kW_, dW_, padW_),
          1};
  const int64_t sampleBytes = s.rows() * s.positions() * static_cast<int64_t>(sizeof(float));
  s.chunk = std::max<int64_t>(1, std::min(s.batch, kChunkBytes / sampleBytes));
  return s;
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

// Both loops go sample by sample and plane by plane, so that the plane being read stays in
// the L1 cache, and move whole rows when no tap reads padding and the stride is 1 (most
// layers): the tap ranges of the general case cost more than the copies at these sizes.
void SpatialConvolution::im2col(const Shape& s, const float* input, int64_t count, float* columns) {
  const int64_t kH = s.kH, kW = s.kW, dH = s.dH, dW = s.dW, padH = s.padH, padW = s.padW;
  const int64_t height = s.height, width = s.width, outH = s.outHeight, outW = s.outWidth;
  const int64_t positions = s.positions(), stride = count * positions, planeSize = height * width;
  const bool plain = padH == 0 && padW == 0 && dH == 1 && dW == 1;
  const auto unfold = outW == 8    ? unfoldPlane<8>
                      : outW == 16 ? unfoldPlane<16>
                      : outW == 24 ? unfoldPlane<24>
                      : outW == 32 ? unfoldPlane<32>
                                   : unfoldPlane<0>;
  for (int64_t n = 0; n < count; ++n)
    for (int64_t c = 0; c < s.planes; ++c) {
      const float* plane = input + (n * s.planes + c) * planeSize;
      if (plain) {
        unfold(plane, width, kH, kW, outH, outW, columns + math::im2colRow(c, 0, 0, kH, kW) * stride + n * positions,
               stride);
        continue;
      }
      for (int64_t ky = 0; ky < kH; ++ky)
        for (int64_t kx = 0; kx < kW; ++kx) {
          float* out = columns + math::im2colRow(c, ky, kx, kH, kW) * stride + n * positions;
          const int64_t yFirst = math::convFirstInside(ky, dH, padH, outH);
          const int64_t yEnd = math::convEndInside(height, ky, dH, padH, outH);
          const int64_t xFirst = math::convFirstInside(kx, dW, padW, outW);
          const int64_t xEnd = math::convEndInside(width, kx, dW, padW, outW);
          if (yFirst >= yEnd || xFirst >= xEnd) {  // this tap only ever reads padding
            fillRow(out, positions, 0.f);
            continue;
          }
          const float* src =
              plane + math::convInputCoord(yFirst, ky, dH, padH) * width + math::convInputCoord(xFirst, kx, dW, padW);
          fillRow(out, yFirst * outW, 0.f);
          float* line = out + yFirst * outW;
          for (int64_t oy = yFirst; oy < yEnd; ++oy, src += dH * width, line += outW) {
            fillRow(line, xFirst, 0.f);
            if (dW == 1)
              copyRow(src, line + xFirst, xEnd - xFirst);
            else
              for (int64_t ox = xFirst; ox < xEnd; ++ox) line[ox] = src[(ox - xFirst) * dW];
            fillRow(line + xEnd, outW - xEnd, 0.f);
          }
          fillRow(line, (outH - yEnd) * outW, 0.f);
        }
    }
}

void SpatialConvolution::col2im(const Shape& s, const float* columns, int64_t count, float* gradInput) {
  const int64_t kH = s.kH, kW = s.kW, dH = s.dH, dW = s.dW, padH = s.padH, padW = s.padW;
  const int64_t height = s.height, width = s.width, outH = s.outHeight, outW = s.outWidth;
  const int64_t positions = s.positions(), stride = count * positions, planeSize = height * width;
  const bool plain = padH == 0 && padW == 0 && dH == 1 && dW == 1;
  const auto fold = outW == 8    ? foldPlane<8>
                    : outW == 16 ? foldPlane<16>
                    : outW == 24 ? foldPlane<24>
                    : outW == 32 ? foldPlane<32>
                                 : foldPlane<0>;
  for (int64_t n = 0; n < count; ++n)
    for (int64_t c = 0; c < s.planes; ++c) {
      float* plane = gradInput + (n * s.planes + c) * planeSize;
      if (plain) {
        fold(columns + math::im2colRow(c, 0, 0, kH, kW) * stride + n * positions, stride, width, kH, kW, outH, outW,
             plane);
        continue;
      }
      for (int64_t ky = 0; ky < kH; ++ky)
        for (int64_t kx = 0; kx < kW; ++kx) {
          const float* in = columns + math::im2colRow(c, ky, kx, kH, kW) * stride + n * positions;
          const int64_t yFirst = math::convFirstInside(ky, dH, padH, outH);
          const int64_t yEnd = math::convEndInside(height, ky, dH, padH, outH);
          const int64_t xFirst = math::convFirstInside(kx, dW, padW, outW);
          const int64_t xEnd = math::convEndInside(width, kx, dW, padW, outW);
          if (yFirst >= yEnd || xFirst >= xEnd) continue;  // this tap only ever reads padding
          float* dst =
              plane + math::convInputCoord(yFirst, ky, dH, padH) * width + math::convInputCoord(xFirst, kx, dW, padW);
          const float* src = in + yFirst * outW + xFirst;
          for (int64_t oy = yFirst; oy < yEnd; ++oy, dst += dH * width, src += outW) {
            if (dW == 1)
              addRow(src, dst, xEnd - xFirst);
            else
              for (int64_t i = 0; i < xEnd - xFirst; ++i) dst[i * dW] += src[i];
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
  const int64_t rows = s.rows(), positions = s.positions();
  const int64_t inSample = s.planes * s.height * s.width, outSample = nOutputPlane_ * positions;
  columns_.resize_({rows, s.chunk * positions}, input.device());
  const float *in = x.data(), *w = weight.data(), *b = bias.data();
  float *columns = columns_.data(), *out = output.data();
  for (int64_t first = 0; first < s.batch; first += s.chunk) {
    const int64_t count = std::min(s.chunk, s.batch - first), cols = count * positions;
    im2col(s, in + first * inSample, count, columns);
    for (int64_t n = 0; n < count; ++n) {
      // output[n] = bias + W[out, rows] * columns[rows, sample n's positions]
      float* y = out + (first + n) * outSample;
      for (int64_t o = 0; o < nOutputPlane_; ++o) fillRow(y + o * positions, positions, b[o]);
      blas::gemm(false, false, nOutputPlane_, positions, rows, 1.f, w, rows, columns + n * positions, cols, 1.f, y,
                 positions);
    }
  }
  return output;
}

const Tensor& SpatialConvolution::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const Shape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  const Tensor g = gradOutput.contiguous();
  const int64_t rows = s.rows(), positions = s.positions();
  const int64_t inSample = s.planes * s.height * s.width, outSample = nOutputPlane_ * positions;
  columns_.resize_({rows, s.chunk * positions}, input.device());
  gradInput.resize_(input.sizes(), input.device());
  const float *w = weight.data(), *go = g.data();
  float *columns = columns_.data(), *gradIn = gradInput.data();
  for (int64_t first = 0; first < s.batch; first += s.chunk) {
    const int64_t count = std::min(s.chunk, s.batch - first), cols = count * positions;
    // gradColumns[rows, sample n's positions] = W[out, rows]^T * gradOutput[n][out, positions]
    for (int64_t n = 0; n < count; ++n)
      blas::gemm(true, false, rows, positions, nOutputPlane_, 1.f, w, rows, go + (first + n) * outSample, positions,
                 0.f, columns + n * positions, cols);
    float* gi = gradIn + first * inSample;
    fillRow(gi, count * inSample, 0.f);
    col2im(s, columns, count, gi);
  }
  return gradInput;
}

void SpatialConvolution::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const Shape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  NN_CHECK(output.sizes() == gradOutput.sizes(),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  const int64_t rows = s.rows(), positions = s.positions();
  const int64_t inSample = s.planes * s.height * s.width, outSample = nOutputPlane_ * positions;
  columns_.resize_({rows, s.chunk * positions}, input.device());
  const float *in = x.data(), *go = g.data();
  float *columns = columns_.data(), *gw = gradWeight.data(), *gb = gradBias.data();
  for (int64_t first = 0; first < s.batch; first += s.chunk) {
    const int64_t count = std::min(s.chunk, s.batch - first), cols = count * positions;
    im2col(s, in + first * inSample, count, columns);
    // gradWeight[out, rows] += scale * gradOutput[n][out, positions] * columns[rows, sample n's positions]^T;
    // gradBias[out] += scale * the sum of gradOutput[n][out], while that sample is in the cache.
    for (int64_t n = 0; n < count; ++n) {
      const float* gn = go + (first + n) * outSample;
      blas::gemm(false, true, nOutputPlane_, rows, positions, scale, gn, positions, columns + n * positions, cols, 1.f,
                 gw, rows);
      for (int64_t o = 0; o < nOutputPlane_; ++o)
        gb[o] += scale * static_cast<float>(sumRow(gn + o * positions, positions));
    }
  }
}

void SpatialConvolution::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
}

}  // namespace nn

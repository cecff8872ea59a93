// nn::SpatialMaxPooling on the CPU: one pass over each window, remembering the winner; windows
// that tile the input without overlap take a faster path.
#include "nn/SpatialMaxPooling.h"

#include <algorithm>
#include <atomic>

#include "nn/math/Pooling.h"

namespace nn {

NN_REGISTER_MODULE(SpatialMaxPooling);

// Indices are stored as floats, exact up to 2^24.
static constexpr int64_t kMaxPlaneSize = int64_t{1} << 24;

namespace {

// One cell of a window's scan in row-major order: the cell replaces the best so far where
// math::maxPoolTakes says so, without a branch. Plane indices are int32_t (planes hold at most
// kMaxPlaneSize cells) so that the selects vectorise alongside the floats.
inline void scanCell(float value, int32_t at, float& best, int32_t& bestAt) {
  const bool take = math::maxPoolTakes(value, best);
  best = take ? value : best;
  bestAt = take ? at : bestAt;
}

// Winner of the kH x kW window whose top-left cell is `cell`, at plane index `at`.
inline void windowMax(const float* cell, int64_t width, int64_t kH, int64_t kW, int32_t at, float& value,
                      float& index) {
  float best = cell[0];
  int32_t bestAt = at;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx)
      scanCell(cell[ky * width + kx], at + static_cast<int32_t>(ky * width + kx), best, bestAt);
  value = best;
  index = static_cast<float>(bestAt);
}

// windowMax of a 2x2 window, written out so that a block of windows vectorises.
inline void windowMax2x2(const float* cell, int64_t width, int32_t at, float& value, float& index) {
  const int32_t w = static_cast<int32_t>(width);
  float best = cell[0];
  int32_t bestAt = at;
  scanCell(cell[1], at + 1, best, bestAt);
  scanCell(cell[width], at + w, best, bestAt);
  scanCell(cell[width + 1], at + w + 1, best, bestAt);
  value = best;
  index = static_cast<float>(bestAt);
}

// Blocks of Windows 2x2 windows side by side, the first with top-left cell `cell` at plane index
// `at`: 8 fill a vector of floats, 4 half of one. The block functions stay out of line: GCC
// vectorises their loops only in a function of their own, where the restrict qualifiers hold.
template <int32_t Windows>
[[gnu::noinline]] void blockMax2x2(const float* __restrict cell, int64_t width, int32_t at, float* __restrict value,
                                   float* __restrict index) {
  for (int32_t j = 0; j < Windows; ++j) windowMax2x2(cell + 2 * j, width, at + 2 * j, value[j], index[j]);
}

// Gradients of Windows 2x2 windows side by side to their cells, 2 * Windows in the row `top`
// and as many in the row `bottom` below it, the first at plane index `at`; returns how many of the
// cells won their window.
template <int32_t Windows>
[[gnu::noinline]] int32_t blockGradient2x2(const float* __restrict winner, const float* __restrict gradOutput,
                                           int32_t at, int32_t width, float* __restrict top, float* __restrict bottom) {
  int32_t won = 0;
  for (int32_t j = 0; j < Windows; ++j) {
    const float cells[4] = {static_cast<float>(at + 2 * j), static_cast<float>(at + 2 * j + 1),
                            static_cast<float>(at + width + 2 * j), static_cast<float>(at + width + 2 * j + 1)};
    top[2 * j] = math::maxPoolCellGradient(cells[0], winner[j], gradOutput[j]);
    top[2 * j + 1] = math::maxPoolCellGradient(cells[1], winner[j], gradOutput[j]);
    bottom[2 * j] = math::maxPoolCellGradient(cells[2], winner[j], gradOutput[j]);
    bottom[2 * j + 1] = math::maxPoolCellGradient(cells[3], winner[j], gradOutput[j]);
    won += (cells[0] == winner[j]) + (cells[1] == winner[j]) + (cells[2] == winner[j]) + (cells[3] == winner[j]);
  }
  return won;
}

}  // namespace

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

SpatialMaxPooling::Shape SpatialMaxPooling::checkInput(const Tensor& input) const {
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
  return Shape{d == 4 ? input.size(0) * input.size(1) : input.size(0), height, width,
               math::poolOutputSize(height, kH_, dH_, padH_, ceilMode_),
               math::poolOutputSize(width, kW_, dW_, padW_, ceilMode_)};
}

void SpatialMaxPooling::resizeLikeOutput(Tensor& t, const Tensor& input, const Shape& s) const {
  if (input.dim() == 4)
    t.resize_({input.size(0), input.size(1), s.outHeight, s.outWidth}, input.device());
  else
    t.resize_({input.size(0), s.outHeight, s.outWidth}, input.device());
}

bool SpatialMaxPooling::disjointWindows(const Shape& s) const {
  return kW_ == dW_ && kH_ == dH_ && padW_ == 0 && padH_ == 0 && s.outWidth * kW_ <= s.width &&
         s.outHeight * kH_ <= s.height;
}

const Tensor& SpatialMaxPooling::updateOutput(const Tensor& input) {
  const Shape s = checkInput(input);
  const Tensor x = input.contiguous();
  resizeLikeOutput(output, input, s);
  resizeLikeOutput(indices, input, s);
  const int parts = parallelParts(input.device(), s.planes);
  if (disjointWindows(s)) {
    parallelFor(input.device(), parts,
                [&](int part) { updateOutputDisjoint(s, x.data(), partRange(s.planes, parts, part)); });
    return output;
  }
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  parallelFor(input.device(), parts, [&](int part) {
    const Range planes = partRange(s.planes, parts, part);
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* in = x.data() + p * inPlane;
      float* out = output.data() + p * outPlane;
      float* arg = indices.data() + p * outPlane;
      for (int64_t oy = 0; oy < s.outHeight; ++oy) {
        const int64_t startY = math::poolWindowStart(oy, dH_, padH_);
        const int64_t y0 = math::poolClippedFirst(startY), y1 = math::poolClippedEnd(startY, kH_, s.height);
        for (int64_t ox = 0; ox < s.outWidth; ++ox) {
          const int64_t startX = math::poolWindowStart(ox, dW_, padW_);
          const int64_t x0 = math::poolClippedFirst(startX), x1 = math::poolClippedEnd(startX, kW_, s.width);
          // every window holds an input cell (math::poolOutputSize)
          windowMax(in + y0 * s.width + x0, s.width, y1 - y0, x1 - x0, static_cast<int32_t>(y0 * s.width + x0),
                    out[oy * s.outWidth + ox], arg[oy * s.outWidth + ox]);
        }
      }
    }
  });
  return output;
}

void SpatialMaxPooling::updateOutputDisjoint(const Shape& s, const float* input, Range planes) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const bool twoByTwo = kW_ == 2 && kH_ == 2;  // the common case, with constant sizes
  float* const values = output.data();
  float* const winners = indices.data();
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t oy = 0; oy < s.outHeight; ++oy) {
      const float* row = input + p * inPlane + oy * kH_ * s.width;
      const int32_t rowAt = static_cast<int32_t>(oy * kH_ * s.width);
      float* out = values + p * outPlane + oy * s.outWidth;
      float* arg = winners + p * outPlane + oy * s.outWidth;
      int64_t ox = 0;
      if (twoByTwo) {
        for (; ox + 8 <= s.outWidth; ox += 8)
          blockMax2x2<8>(row + 2 * ox, s.width, rowAt + static_cast<int32_t>(2 * ox), out + ox, arg + ox);
        for (; ox + 4 <= s.outWidth; ox += 4)
          blockMax2x2<4>(row + 2 * ox, s.width, rowAt + static_cast<int32_t>(2 * ox), out + ox, arg + ox);
      }
      for (; ox < s.outWidth; ++ox)
        windowMax(row + ox * kW_, s.width, kH_, kW_, rowAt + static_cast<int32_t>(ox * kW_), out[ox], arg[ox]);
    }
}

const Tensor& SpatialMaxPooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const Shape s = checkInput(input);
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
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const int parts = parallelParts(input.device(), s.planes);
  if (disjointWindows(s)) {
    std::atomic<bool> found{true};
    parallelFor(input.device(), parts, [&](int part) {
      if (!updateGradInputDisjoint(s, g.data(), partRange(s.planes, parts, part))) found = false;
    });
    NN_CHECK(found, toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
    return gradInput;
  }
  gradInput.zero_();
  parallelFor(input.device(), parts, [&](int part) {
    const Range planes = partRange(s.planes, parts, part);
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* go = g.data() + p * outPlane;
      const float* arg = indices.data() + p * outPlane;
      float* gi = gradInput.data() + p * inPlane;
      for (int64_t i = 0; i < outPlane; ++i) {
        const int64_t k = static_cast<int64_t>(arg[i]);
        NN_CHECK(k >= 0 && k < inPlane,
                 toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
        gi[k] += go[i];
      }
    }
  });
  return gradInput;
}

bool SpatialMaxPooling::updateGradInputDisjoint(const Shape& s, const float* gradOut, Range planes) {
  // Each input cell lies in at most one window, so every gradInput cell is written once: the
  // window's gradient where the cell won it, 0 where it lost or lies outside every window.
  // Every window must find its winner among its cells, else the indices are not of a forward
  // on this input.
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const int64_t kW = kW_, kH = kH_, width = s.width;
  const bool twoByTwo = kW == 2 && kH == 2;  // the common case, with constant sizes
  const float* const args = indices.data();
  float* const gradIn = gradInput.data();
  int64_t winners = 0;
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* go = gradOut + p * outPlane;
    const float* arg = args + p * outPlane;
    float* gi = gradIn + p * inPlane;
    for (int64_t oy = 0; oy < s.outHeight; ++oy) {
      const float* winner = arg + oy * s.outWidth;
      const float* grads = go + oy * s.outWidth;
      float* top = gi + oy * kH * width;
      const int32_t topAt = static_cast<int32_t>(oy * kH * width);
      int64_t ox = 0;
      if (twoByTwo) {
        for (; ox + 8 <= s.outWidth; ox += 8)
          winners += blockGradient2x2<8>(winner + ox, grads + ox, topAt + static_cast<int32_t>(2 * ox),
                                         static_cast<int32_t>(width), top + 2 * ox, top + width + 2 * ox);
        for (; ox + 4 <= s.outWidth; ox += 4)
          winners += blockGradient2x2<4>(winner + ox, grads + ox, topAt + static_cast<int32_t>(2 * ox),
                                         static_cast<int32_t>(width), top + 2 * ox, top + width + 2 * ox);
      }
      for (int64_t ky = 0; ky < kH; ++ky) {
        float* line = top + ky * width;
        const int32_t lineAt = topAt + static_cast<int32_t>(ky * width);
        int64_t x = ox * kW;
        for (int64_t o = ox; o < s.outWidth; ++o)
          for (int64_t kx = 0; kx < kW; ++kx, ++x) {
            const float at = static_cast<float>(lineAt + static_cast<int32_t>(x));
            line[x] = math::maxPoolCellGradient(at, winner[o], grads[o]);
            winners += at == winner[o];
          }
        for (; x < width; ++x) line[x] = 0.f;  // right of the last window
      }
    }
    for (int64_t i = s.outHeight * kH * width; i < inPlane; ++i) gi[i] = 0.f;  // below the last window
  }
  return winners == (planes.end - planes.begin) * outPlane;
}

void SpatialMaxPooling::clearState() {
  Module::clearState();
  indices.set_(Tensor());
}

}  // namespace nn

#include "nn/data/ImageTransforms.h"

#include <cmath>
#include <utility>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// The batch's sizes, checked to be [N, C, H, W] on the host.
void checkBatch(const Tensor& input, const char* who) {
  NN_CHECK(input.dim() == 4 && input.isContiguous(),
           who << ": expected a contiguous batch [N, C, H, W], got " << input.shapeString());
}

// Input coordinate of output cell `o` of `out` cells over `in`: PyTorch's area_pixel_compute_source_index
// without align_corners, clamped at 0.
double source(int64_t o, int64_t in, int64_t out) {
  const double x = (static_cast<double>(o) + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  return x < 0 ? 0 : x;
}

}  // namespace

Tensor resizeBilinear(const Tensor& image, int64_t height, int64_t width) {
  NN_CHECK(image.dim() == 3 && image.numel() > 0,
           "nn::resizeBilinear: expected a picture [C, H, W], got " << image.shapeString());
  NN_CHECK(height > 0 && width > 0 && height <= (int64_t{1} << 20) && width <= (int64_t{1} << 20),
           "nn::resizeBilinear: expected sizes from 1 to 2^20, got " << height << " x " << width);
  const Tensor x = image.contiguous();
  const int64_t c = x.size(0), h = x.size(1), w = x.size(2);
  Tensor out = Tensor::empty({c, height, width});
  const float* in = x.data();
  float* o = out.data();
  for (int64_t y = 0; y < height; ++y) {
    const double sy = source(y, h, height);
    const int64_t y0 = std::min(static_cast<int64_t>(sy), h - 1), y1 = std::min(y0 + 1, h - 1);
    const float ly = static_cast<float>(sy - static_cast<double>(y0));
    for (int64_t xo = 0; xo < width; ++xo) {
      const double sx = source(xo, w, width);
      const int64_t x0 = std::min(static_cast<int64_t>(sx), w - 1), x1 = std::min(x0 + 1, w - 1);
      const float lx = static_cast<float>(sx - static_cast<double>(x0));
      for (int64_t k = 0; k < c; ++k) {
        const float* p = in + k * h * w;
        const float top = (1 - lx) * p[y0 * w + x0] + lx * p[y0 * w + x1];
        const float bottom = (1 - lx) * p[y1 * w + x0] + lx * p[y1 * w + x1];
        o[(k * height + y) * width + xo] = (1 - ly) * top + ly * bottom;
      }
    }
  }
  return out;
}

Tensor centerCrop(const Tensor& image, int64_t height, int64_t width) {
  NN_CHECK(image.dim() == 3 && height > 0 && width > 0 && height <= image.size(1) && width <= image.size(2),
           "nn::centerCrop: expected a picture [C, H, W] of at least " << height << " x " << width << ", got "
                                                                       << image.shapeString());
  const int64_t top = std::llround(static_cast<double>(image.size(1) - height) / 2);
  const int64_t left = std::llround(static_cast<double>(image.size(2) - width) / 2);
  return image.narrow(1, top, height).narrow(2, left, width).contiguous().clone();
}

double sampleUniform(uint64_t seed, int64_t epoch, int64_t batch, int64_t index, uint64_t draw) {
  // SplitMix64 over the five numbers, one after the other.
  uint64_t z = seed;
  for (uint64_t v : {static_cast<uint64_t>(epoch), static_cast<uint64_t>(batch), static_cast<uint64_t>(index), draw}) {
    z += 0x9e3779b97f4a7c15ULL ^ v;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
  }
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

BatchTransform randomCrop(int64_t padding, uint64_t seed) {
  NN_CHECK(padding >= 0 && padding <= 4096, "nn::randomCrop: expected a padding from 0 to 4096, got " << padding);
  return [padding, seed, scratch = std::vector<float>()](Tensor& input, Tensor&, int64_t epoch,
                                                         int64_t batch) mutable {
    checkBatch(input, "nn::randomCrop");
    const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
    scratch.resize(static_cast<size_t>(c * h * w));
    float* data = input.data();
    for (int64_t i = 0; i < n; ++i) {
      // The window's top-left corner in the padded picture: 0 to 2 padding, each.
      const auto span = static_cast<double>(2 * padding + 1);
      const int64_t dy = static_cast<int64_t>(sampleUniform(seed, epoch, batch, i, 0) * span) - padding;
      const int64_t dx = static_cast<int64_t>(sampleUniform(seed, epoch, batch, i, 1) * span) - padding;
      float* sample = data + i * c * h * w;
      for (int64_t k = 0; k < c; ++k)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t x = 0; x < w; ++x) {
            const int64_t sy = y + dy, sx = x + dx;
            scratch[static_cast<size_t>((k * h + y) * w + x)] =
                sy >= 0 && sy < h && sx >= 0 && sx < w ? sample[(k * h + sy) * w + sx] : 0.f;
          }
      std::copy(scratch.begin(), scratch.end(), sample);
    }
  };
}

BatchTransform horizontalFlip(uint64_t seed, double p) {
  NN_CHECK(p >= 0 && p <= 1, "nn::horizontalFlip: expected a probability, got " << p);
  return [seed, p](Tensor& input, Tensor&, int64_t epoch, int64_t batch) {
    checkBatch(input, "nn::horizontalFlip");
    const int64_t n = input.size(0), rows = input.size(1) * input.size(2), w = input.size(3);
    float* data = input.data();
    for (int64_t i = 0; i < n; ++i) {
      if (sampleUniform(seed, epoch, batch, i, 2) >= p) continue;
      for (int64_t r = 0; r < rows; ++r) {
        float* row = data + (i * rows + r) * w;
        for (int64_t a = 0, b = w - 1; a < b; ++a, --b) std::swap(row[a], row[b]);
      }
    }
  };
}

BatchTransform normalize(std::vector<float> mean, std::vector<float> deviation) {
  NN_CHECK(!mean.empty() && mean.size() == deviation.size(),
           "nn::normalize: expected as many means as deviations, got " << mean.size() << " and " << deviation.size());
  for (float d : deviation) NN_CHECK(d > 0 && std::isfinite(d), "nn::normalize: expected positive deviations, got " << d);
  return [mean = std::move(mean), deviation = std::move(deviation)](Tensor& input, Tensor&, int64_t, int64_t) {
    checkBatch(input, "nn::normalize");
    const int64_t n = input.size(0), c = input.size(1), plane = input.size(2) * input.size(3);
    NN_CHECK(static_cast<size_t>(c) == mean.size(),
             "nn::normalize: " << mean.size() << " channels' means for a batch " << input.shapeString());
    float* data = input.data();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < c; ++k) {
        float* p = data + (i * c + k) * plane;
        for (int64_t j = 0; j < plane; ++j) p[j] = (p[j] - mean[static_cast<size_t>(k)]) / deviation[static_cast<size_t>(k)];
      }
  };
}

BatchTransform compose(std::vector<BatchTransform> transforms) {
  return [transforms = std::move(transforms)](Tensor& input, Tensor& target, int64_t epoch, int64_t batch) mutable {
    for (BatchTransform& t : transforms)
      if (t) t(input, target, epoch, batch);
  };
}

}  // namespace nn

// Image transforms, as torchvision's: on one picture [C, H, W] (resize, center crop: the
// deterministic steps nn::ImageFolder takes for every sample), and on a batch [N, C, H, W] as
// a BatchIterator's transform (random crop with padding, horizontal flip, per-channel
// normalisation). The random ones draw from a hash of (seed, epoch, batch, sample), no state:
// the same batch is transformed alike however it is reached (a --resume, a background thread).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/data/BatchIterator.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// [C, H, W] resized to [C, height, width], bilinear, as torchvision's resize with antialias
/// off (PyTorch's interpolate(mode="bilinear", align_corners=False)): output cell x samples the
/// input at (x + 0.5) W / width - 0.5, clamped at 0, between its two neighbours.
Tensor resizeBilinear(const Tensor& image, int64_t height, int64_t width);

/// The central height x width of [C, H, W] (torchvision's CenterCrop: the top row
/// round((H - height) / 2), likewise the left column), copied.
Tensor centerCrop(const Tensor& image, int64_t height, int64_t width);

/// A random height x width window of each sample padded with `padding` zeros on every side,
/// so that the batch keeps its sizes (torchvision's RandomCrop(size, padding)).
BatchTransform randomCrop(int64_t padding, uint64_t seed);

/// Each sample mirrored left to right with probability `p` (RandomHorizontalFlip).
BatchTransform horizontalFlip(uint64_t seed, double p = 0.5);

/// (x - mean[c]) / deviation[c] for channel c (Normalize), in floats.
BatchTransform normalize(std::vector<float> mean, std::vector<float> deviation);

/// The transforms one after the other.
BatchTransform compose(std::vector<BatchTransform> transforms);

/// A uniform number in [0, 1) for sample `index` of batch `batch` of `epoch`, and `draw`: the
/// random transforms' source.
double sampleUniform(uint64_t seed, int64_t epoch, int64_t batch, int64_t index, uint64_t draw);

}  // namespace nn

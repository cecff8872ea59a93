// cuDNN tensor descriptors, made once per device and shape and kept for the life of the
// process, so that a steady training step creates none.
#pragma once

#include <cudnn.h>

#include <cstdint>

namespace nn {

/// The descriptor of a contiguous float tensor [n, c, h, w] for cuDNN calls on cuda:`device`;
/// an nn::Error naming `what` where a size or the element count is beyond cuDNN's int.
/// Safe to call from every device's thread at once.
cudnnTensorDescriptor_t cudnnTensorDescriptor(int device, int64_t n, int64_t c, int64_t h, int64_t w, const char* what);

}  // namespace nn

// nn::TensorDataset: rows of two CPU tensors.
#include "nn/data/Dataset.h"

#include <cstring>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Elements per sample of a [N, ...] tensor.
int64_t rowSize(const Tensor& t) { return t.size(0) == 0 ? 0 : t.numel() / t.size(0); }

}  // namespace

TensorDataset::TensorDataset(const Tensor& inputs, const Tensor& targets)
    : inputs_(inputs.contiguous()), targets_(targets.contiguous()) {
  NN_CHECK(inputs.dim() >= 1 && targets.dim() >= 1 && inputs.size(0) == targets.size(0) && inputs.size(0) > 0,
           "nn.TensorDataset: expected inputs [N, ...] and targets [N, ...] with the same N > 0, got inputs "
               << inputs.shapeString() << " and targets " << targets.shapeString());
  NN_CHECK(inputs.device().isCpu() && inputs.device() == targets.device(),
           "nn.TensorDataset: expected inputs and targets on one CPU device, got " << inputs.device().str() << " and "
                                                                                   << targets.device().str());
  inputRow_ = rowSize(inputs_);
  targetRow_ = rowSize(targets_);
}

std::vector<int64_t> TensorDataset::inputSizes() const {
  return std::vector<int64_t>(inputs_.sizes().begin() + 1, inputs_.sizes().end());
}

std::vector<int64_t> TensorDataset::targetSizes() const {
  return std::vector<int64_t>(targets_.sizes().begin() + 1, targets_.sizes().end());
}

void TensorDataset::get(int64_t index, float* input, float* target) const {
  std::memcpy(input, inputs_.data() + index * inputRow_, static_cast<size_t>(inputRow_) * sizeof(float));
  std::memcpy(target, targets_.data() + index * targetRow_, static_cast<size_t>(targetRow_) * sizeof(float));
}

}  // namespace nn

// nn::GradientClipper (GradientClipper.h).
#include "nn/optim/GradientClipper.h"

#include <algorithm>
#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/math/Activation.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Parts of the buffer summed each by one result of the reduce kernel: enough that a GPU's
// threads share the work, few enough that the host adds them at once.
constexpr int64_t kParts = 256;

}  // namespace

GradientClipper::GradientClipper(const Tensor& gradients) : gradients_(gradients) {
  NN_CHECK(gradients.numel() == 0 || gradients.isContiguous(),
           "nn.GradientClipper: expected a contiguous gradient buffer, got sizes "
               << gradients.shapeString() << " with strides " << shapeString(gradients.strides()));
  parts_ = std::min<int64_t>(kParts, gradients.numel());
  // One result a part, and one for the elements the parts leave over.
  partial_ = Tensor::zeros({parts_ + 1}, gradients.device());
  if (!backendOf(gradients.device()).isHost()) host_ = Tensor::zeros({parts_ + 1});
}

double GradientClipper::norm() {
  const int64_t n = gradients_.numel();
  if (n == 0) return 0;
  const Device& device = gradients_.device();
  const auto& reduce = kernelsOf(device).tensor.reduce;
  const int64_t length = n / parts_, rest = n - parts_ * length;
  const float* g = gradients_.rawData();
  float* sums = partial_.rawData();
  reduce(device, sums, g, parts_, length, 1, math::Reduction::kSumSquares);
  reduce(device, sums + parts_, g + parts_ * length, 1, rest, 1, math::Reduction::kSumSquares);
  // The parts' sums on the host: the device's buffer itself where it is the host's memory.
  if (host_.numel() > 0) host_.copy_(partial_);
  const float* read = host_.numel() > 0 ? host_.data() : partial_.data();
  double total = 0;
  for (int64_t i = 0; i <= parts_; ++i) total += read[i];
  return std::sqrt(total);
}

double GradientClipper::clipNorm(double maxNorm) {
  NN_CHECK(std::isfinite(maxNorm) && maxNorm > 0,
           "nn.GradientClipper.clipNorm: expected a positive, finite maximum norm, got " << maxNorm);
  const double total = norm();
  NN_CHECK(std::isfinite(total), "nn.GradientClipper.clipNorm: the gradients' norm is "
                                     << total << " (a gradient is not finite); they were left as they were");
  const double coefficient = maxNorm / (total + 1e-6);
  if (coefficient < 1) gradients_.mul_(static_cast<float>(coefficient));
  return total;
}

void GradientClipper::clipValue(double value) {
  NN_CHECK(std::isfinite(value) && value > 0,
           "nn.GradientClipper.clipValue: expected a positive, finite value, got " << value);
  if (gradients_.numel() == 0) return;
  math::ActivationArgs args;
  args.a = static_cast<float>(-value);
  args.b = static_cast<float>(value);
  const Device& device = gradients_.device();
  kernelsOf(device).elementwise.activations[math::activation::indexOf<math::activation::HardTanh>()].forward(
      device, args, gradients_.rawData(), gradients_.rawData(), gradients_.numel());
}

}  // namespace nn

// nn::GradScaler: dynamic loss scaling (GradScaler.h).
#include "nn/optim/GradScaler.h"

#include <cfloat>
#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

constexpr const char* kModule = "nn.GradScaler";

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  const GradScalerOptions& o = options_;
  NN_CHECK(std::isfinite(o.initScale) && o.initScale > 0 && o.initScale <= FLT_MAX,
           kModule << ": expected an initial scale > 0 within a float's range, got " << o.initScale);
  NN_CHECK(std::isfinite(o.growthFactor) && o.growthFactor > 1,
           kModule << ": expected a growth factor > 1, got " << o.growthFactor);
  NN_CHECK(o.backoffFactor > 0 && o.backoffFactor < 1,
           kModule << ": expected a backoff factor in (0, 1), got " << o.backoffFactor);
  NN_CHECK(o.growthInterval >= 1, kModule << ": expected a growth interval >= 1, got " << o.growthInterval);
  scale_ = static_cast<float>(o.initScale);
}

Tensor GradScaler::scale(Tensor gradient) const {
  NN_CHECK(gradient.isContiguous(),
           kModule << ".scale: expected a contiguous gradient, got sizes " << gradient.shapeString() << " with strides "
                   << shapeString(gradient.strides()));
  gradient.mul_(scale_);
  return gradient;
}

void GradScaler::unscale(Optimizer& optimizer) {
  NN_CHECK(!unscaled_, kModule << ".unscale: called twice in one step (update() starts the next)");
  Tensor gradients = optimizer.gradients();
  const int64_t count = gradients.numel();
  bool finite = true;
  if (count > 0) {
    // Multiplied by the inverse as PyTorch's _amp_foreach_non_finite_check_and_unscale_ does: exact
    // for the powers of two that the dynamic scale is. Element by element, exactly: the greatest
    // of the gradients negated (an -inf or a NaN makes it inf or NaN: a NaN counts as the
    // greatest, math::reduceAlong), then, negated back (negation is exact, so they end as one
    // multiplication by the inverse leaves them), the greatest of the gradients (an inf or a NaN).
    // A sum would count finite gradients whose sum overflows as inf.
    const Device device = gradients.device();
    const auto& tensor = kernelsOf(device).tensor;
    extremes_.resize_({2}, device);
    gradients.mul_(static_cast<float>(-1.0 / static_cast<double>(scale_)));
    tensor.reduce(device, extremes_.rawData(), gradients.rawData(), 1, count, 1, math::Reduction::kMax);
    gradients.mul_(-1.f);
    tensor.reduce(device, extremes_.rawData() + 1, gradients.rawData(), 1, count, 1, math::Reduction::kMax);
    const float* greatest = nullptr;
    if (device.isCpu()) {
      greatest = extremes_.data();
    } else {  // data() is for CPU tensors: read through a host copy
      host_.resize_({2}, Device());
      host_.copy_(extremes_);
      greatest = host_.data();
    }
    finite = std::isfinite(greatest[0]) && std::isfinite(greatest[1]);
  }
  foundInf_ = !finite;
  unscaled_ = true;
}

bool GradScaler::step(Optimizer& optimizer) {
  if (!unscaled_) unscale(optimizer);
  if (foundInf_) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (options_.dynamic) {
    if (foundInf_) {
      scale_ = static_cast<float>(scale_ * options_.backoffFactor);
      // A scale that underflows to zero could never grow back.
      if (!(scale_ > 0)) scale_ = FLT_MIN;
      growthTracker_ = 0;
    } else if (++growthTracker_ >= options_.growthInterval) {
      const double grown = scale_ * options_.growthFactor;
      // A scale beyond a float's range would make every gradient inf: it stays where it is.
      if (grown <= FLT_MAX) scale_ = static_cast<float>(grown);
      growthTracker_ = 0;
    }
  }
  unscaled_ = false;
  foundInf_ = false;
}

void GradScaler::setState(double scale, int64_t growthTracker) {
  NN_CHECK(std::isfinite(scale) && scale > 0 && scale <= FLT_MAX,
           kModule << ": expected a scale > 0 within a float's range, got " << scale);
  NN_CHECK(growthTracker >= 0 && growthTracker < options_.growthInterval,
           kModule << ": expected a growth tracker from 0 to " << options_.growthInterval - 1 << ", got "
                   << growthTracker);
  scale_ = static_cast<float>(scale);
  growthTracker_ = growthTracker;
  unscaled_ = false;
  foundInf_ = false;
}

}  // namespace nn

// nn::Dropout: Torch7's v2 dropout. In training, output = input * noise with noise 1 / (1 - p)
// with probability 1 - p and 0 otherwise; in evaluation, output = input.
#pragma once

#include "nn/core/Options.h"
#include "nn/tensor/Random.h"

namespace nn {

/// The arguments of Dropout.
struct DropoutOptions {
  /// The probability of zeroing each element, in [0, 1). Default 0.5.
  float p = 0.5f;

  template <typename F>
  void visit(F&& field) {
    field("p", p);
  }
};

/// Torch7's nn.Dropout (v2): in training, kept elements are scaled by 1 / (1 - p); in evaluation, output = input.
class Dropout : public WithOptions<DropoutOptions> {
 public:
  /// Zeroes each element with probability `p` in training.
  explicit Dropout(float p = 0.5f) : Dropout(Options{p}) {}
  /// The module of `options`, its generator() seeded from defaultGenerator(); an nn::Error unless p is in [0, 1).
  explicit Dropout(const Options& options) : Dropout(options, "nn.Dropout") {}

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Dropout"; }
  /// "nn.Dropout(0.5)"
  std::string toString() const override;

  /// The probability of zeroing an element (DropoutOptions::p).
  float p() const { return options_.p; }
  /// The source of this module's masks, its own so that threads never share one; seeded at
  /// construction from defaultGenerator(). Each training forward takes the key of its mask
  /// from it (Dropout: two draws, whatever the input's size). Reseeding it replays the same masks.
  Generator& generator() { return generator_; }

  /// The factors of the last training forward, 0 or 1 / (1 - p) per element of the input.
  Tensor noise;

 protected:
  /// `module` names the subclass in the errors of the constructor.
  Dropout(const Options& options, const char* module);
  /// Checks the input, naming the module (any input by default).
  virtual void checkInput(const Tensor& input) const;
  /// Fills mask, the input's sizes, with math::dropoutNoise factors drawn from generator():
  /// one per element from a key of two draws (Dropout, by the compute threads of the input's
  /// CPU device), or one draw per group of elements (SpatialDropout: per plane).
  virtual void drawMask(const Tensor& input, float* mask);

 private:
  Generator generator_;
  // The mask as drawn, on the host, before it is copied to the input's device as `noise`.
  Tensor hostNoise_;
};

}  // namespace nn

// nn::BatchNormalization: per-feature normalisation of an input [batch, features] by the
// batch statistics in training mode and by running statistics in evaluation mode.
#pragma once

#include "nn/Module.h"
#include "nn/backend/BatchNormKernels.h"

namespace nn {

class BatchNormalization : public Module {
 public:
  /// nOutput features; eps is added to the variance; momentum weighs the batch statistics
  /// in the running ones; affine adds a learnt weight and bias per feature.
  explicit BatchNormalization(int64_t nOutput, float eps = 1e-5f, float momentum = 0.1f, bool affine = true);
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Torch7's reset: weight uniform in [0, 1) from the default generator, bias zero,
  /// running mean zero, running variance one.
  void reset();

  /// Training mode normalises with the batch mean and biased variance and moves the running
  /// statistics towards the batch ones (the variance unbiased); evaluate() uses the running ones.
  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  /// Also releases the saved batch statistics.
  void clearState() override;

  std::string typeName() const override { return typeName_; }
  /// "nn.BatchNormalization(20)", with ", eps=...", ", momentum=..." and ", affine=false"
  /// where they differ from the defaults.
  std::string toString() const override;
  Config config() const override;

  int64_t nOutput() const { return nOutput_; }
  float eps() const { return eps_; }
  float momentum() const { return momentum_; }
  bool affine() const { return affine_; }

  /// [nOutput] each; weight, bias and their gradients are empty when the module is not affine.
  Tensor weight, bias, gradWeight, gradBias;
  /// Buffers "running_mean" and "running_var", [nOutput] each.
  Tensor runningMean, runningVar;

 protected:
  /// For SpatialBatchNormalization (name "nn.SpatialBatchNormalization", inputDim 4): input
  /// [batch, nOutput, height, width], the statistics of a feature over batch and positions.
  BatchNormalization(const char* name, int64_t nOutput, float eps, float momentum, bool affine, int inputDim);

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput) const;
  /// The input as the kernels see it: [batch, nOutput, height * width].
  BatchNormShape shapeOf(const Tensor& input) const;
  /// This module's tensors and settings for the kernels.
  BatchNormState state();

  const char* typeName_;
  int64_t nOutput_;
  float eps_;
  float momentum_;
  bool affine_;
  int inputDim_;
  // The batch mean and 1 / sqrt(biased var + eps) of the last training-mode forward.
  Tensor saveMean_, saveInvstd_;
};

}  // namespace nn

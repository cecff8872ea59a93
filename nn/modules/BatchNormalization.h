// nn::BatchNormalization: per-feature normalisation of an input [batch, features] by the
// batch statistics in training mode and by running statistics in evaluation mode.
#pragma once

#include <vector>

#include "nn/backend/BatchNormKernels.h"
#include "nn/core/Options.h"
#include "nn/core/StatisticsGroup.h"

namespace nn {

/// nOutput features; eps is added to the variance; momentum weighs the batch statistics in the
/// running ones; affine adds a learnt weight and bias per feature.
struct BatchNormalizationOptions {
  /// The number of features, the input's dimension 1 (SpatialBatchNormalization: its planes); positive.
  int64_t nOutput = 0;
  /// Added to the variance, the batch's or the running one, before its inverse square root; at least 0.
  /// Default 1e-5.
  float eps = 1e-5f;
  /// Each training forward sets running = (1 - momentum) * running + momentum * batch statistic. Default 0.1.
  float momentum = 0.1f;
  /// Learns a weight and a bias per feature (y = normalised x * weight + bias); without them the output is the
  /// normalised input. Default true.
  bool affine = true;
  /// Synchronised (PyTorch's SyncBatchNorm): in training mode, the statistics of the whole batch
  /// that a DataParallelTable's replicas and a DistributedDataParallelTable's ranks hold slices
  /// of, summed over them at each pass (nn/core/StatisticsGroup.h); outside such tables, or in
  /// evaluation mode, the same as without. Default false.
  bool sync = false;

  template <typename F>
  void visit(F&& field) {
    field("nOutput", nOutput);
    field("eps", eps);
    field("momentum", momentum);
    field("affine", affine);
    field("sync", sync, DefaultIfAbsent{});
  }
};

/// Torch7's nn.BatchNormalization (PyTorch's BatchNorm1d), for an input [batch, nOutput].
class BatchNormalization : public WithOptions<BatchNormalizationOptions> {
 public:
  /// A module of `nOutput` features; the other arguments are those of BatchNormalizationOptions.
  explicit BatchNormalization(int64_t nOutput, float eps = 1e-5f, float momentum = 0.1f, bool affine = true)
      : BatchNormalization(Options{nOutput, eps, momentum, affine}) {}
  /// The module of `options`, its parameters and buffers as reset() sets them; an nn::Error unless nOutput is
  /// positive and eps at least 0.
  explicit BatchNormalization(const Options& options);

  /// Torch7's reset: weight uniform in [0, 1) from the default generator, bias zero,
  /// running mean zero, running variance one.
  void reset();

  /// Training mode normalises with the batch mean and biased variance and moves the running
  /// statistics towards the batch ones (the variance unbiased); evaluate() uses the running ones.
  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  /// Right after a training-mode updateGradInput of the same input and gradOutput (as backward
  /// calls them), takes the per-feature sums that pass computed instead of reading both again.
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  /// Also releases the saved batch statistics.
  void clearState() override;

  /// An in-place ReLU after this module is taken into its passes (Note [Batch normalisation,
  /// then ReLU], nn/math/BatchNorm.h): the output is then ReLU(y) and gradOutput is the ReLU's.
  bool canTakeNext(const Module& next) const override;
  void takeNext(Module& next, bool taken) override;

  std::string typeName() const override { return typeName_; }
  /// "nn.BatchNormalization(20)", with ", eps=...", ", momentum=..." and ", affine=false"
  /// where they differ from the defaults.
  std::string toString() const override;

  /// The number of features (BatchNormalizationOptions::nOutput).
  int64_t nOutput() const { return options_.nOutput; }
  /// The number added to the variance (BatchNormalizationOptions::eps).
  float eps() const { return options_.eps; }
  /// The weight of a batch's statistics in the running ones (BatchNormalizationOptions::momentum).
  float momentum() const { return options_.momentum; }
  /// Whether the module has a weight and a bias (BatchNormalizationOptions::affine).
  bool affine() const { return options_.affine; }
  /// Whether the statistics are the whole batch's across devices and ranks (BatchNormalizationOptions::sync).
  bool sync() const { return options_.sync; }
  /// Sets sync(); nn::setSyncBatchNorm sets it on every batch normalisation of a tree.
  void setSync(bool sync) { options_.sync = sync; }

  /// The scale per feature, [nOutput]; empty when the module is not affine.
  Tensor weight;
  /// The shift per feature, [nOutput]; empty when the module is not affine.
  Tensor bias;
  /// Gradient of the loss with respect to weight, [nOutput], summed over the batch (and positions);
  /// zeroed by zeroGradParameters; empty when the module is not affine.
  Tensor gradWeight;
  /// Gradient of the loss with respect to bias, [nOutput], summed over the batch (and positions);
  /// zeroed by zeroGradParameters; empty when the module is not affine.
  Tensor gradBias;
  /// Buffer "running_mean", [nOutput]: the mean evaluation mode normalises with; starts at 0.
  Tensor runningMean;
  /// Buffer "running_var", [nOutput]: the (unbiased) variance evaluation mode normalises with; starts at 1.
  Tensor runningVar;

 protected:
  /// For SpatialBatchNormalization (name "nn.SpatialBatchNormalization", inputDim 4): input
  /// [batch, nOutput, height, width], the statistics of a feature over batch and positions.
  BatchNormalization(const char* name, const Options& options, int inputDim);

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput) const;
  /// The input as the kernels see it: [batch, nOutput, height * width].
  BatchNormShape shapeOf(const Tensor& input) const;
  /// This module's tensors and settings for the kernels.
  BatchNormState state();
  /// The training forward and the training updateGradInput where sync() and the thread has a
  /// StatisticsGroup: the kernels' phases, with the sums added over the group between them.
  void syncedOutput(const Tensor& x, StatisticsGroup& group);
  void syncedGradInput(const Tensor& x, const Tensor& g, StatisticsGroup& group);
  /// Sums the device's `sums` and `extra` with the group's (allReduceGradientSum where
  /// `gradients`), through the host: the totals, in double, `extra`'s last.
  std::vector<double>& sumOverGroup(const Tensor& sums, StatisticsGroup& group, double extra, bool gradients = false);

  const char* typeName_;
  int inputDim_;
  // The batch mean and 1 / sqrt(biased var + eps) of the last training-mode forward.
  Tensor saveMean_, saveInvstd_;
  // [2, nOutput]: the sums of the gradients (BatchNormState::gradSums) of the last training
  // updateGradInput, for the input and gradOutput data it read (null when there are none to take).
  Tensor gradSums_;
  const float* gradSumsInput_ = nullptr;
  const float* gradSumsGradOutput_ = nullptr;
  bool gradSumsReLUAfter_ = false;
  bool reluAfter_ = false;
  // Synchronised statistics: the kernels' per-feature sums on the device, the group's totals
  // on the host, the totals of the gradient sums back on the device, the host's staging of
  // [features] values and its copies (kept, so that a step allocates nothing), and the whole
  // batch's count of values per feature of the last forward.
  Tensor statSums_, groupGradSums_, hostStage_;
  std::vector<double> totals_;
  std::vector<float> hostMean_, hostValues_, hostRunning_;
  int64_t syncedCount_ = 0;
};

/// Sets BatchNormalizationOptions::sync on every BatchNormalization and SpatialBatchNormalization
/// of `module`'s tree (PyTorch's SyncBatchNorm.convert_sync_batchnorm), before it is wrapped in
/// a data-parallel table.
void setSyncBatchNorm(Module& module, bool sync = true);

}  // namespace nn

// Modules of one's own, as a user of the library writes them (README, "Writing your own
// module"): a leaf with parameters and a container, in the user's namespace, registered under
// names of their own so that clone() (and with it DataParallelTable's replicas) and nn::load
// can rebuild them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/core/Container.h"
#include "nn/core/Options.h"

namespace my {

/// The options of Affine: what its constructor needs, as config() saves them and
/// nn::createModule rebuilds the module from (the field names are the saved keys).
struct AffineOptions {
  int64_t features = 0;

  template <typename F>
  void visit(F&& field) {
    field("features", features);
  }
};

/// y[n][f] = x[n][f] * weight[f] + bias[f] on an input [batch, features]: a learnt scale and
/// shift per feature. Weight starts at 1 and bias at 0, so a new Affine passes its input through.
/// A plain loop over host memory: CPU devices only (an input elsewhere is refused by name).
class Affine : public nn::WithOptions<AffineOptions> {
 public:
  explicit Affine(int64_t features) : Affine(Options{features}) {}
  explicit Affine(const Options& options);

  const nn::Tensor& updateOutput(const nn::Tensor& input) override;
  const nn::Tensor& updateGradInput(const nn::Tensor& input, const nn::Tensor& gradOutput) override;
  void accGradParameters(const nn::Tensor& input, const nn::Tensor& gradOutput, float scale) override;

  std::string typeName() const override { return "my.Affine"; }

  nn::Tensor weight, bias, gradWeight, gradBias;

 private:
  void checkInput(const nn::Tensor& input) const;
};

/// y = x + inner(x), for one child whose output has its input's sizes: a residual connection
/// as a container of one's own (the library's own way is ConcatTable(inner, Identity), then
/// CAddTable). No options; the child comes back through create() when the module is rebuilt.
class Residual : public nn::Container {
 public:
  explicit Residual(nn::ModulePtr inner);
  /// What nn::createModule calls to rebuild a Residual: the saved config (empty) and the
  /// rebuilt children (one).
  static nn::ModulePtr create(const nn::Config& config, std::vector<nn::ModulePtr> children);

  const nn::Tensor& updateOutput(const nn::Tensor& input) override;
  const nn::Tensor& updateGradInput(const nn::Tensor& input, const nn::Tensor& gradOutput) override;
  void accGradParameters(const nn::Tensor& input, const nn::Tensor& gradOutput, float scale) override;

  std::string typeName() const override { return "my.Residual"; }
  std::string toString() const override;
};

/// An MLP for 28x28 images that uses both: View(-1, 784), Linear 784->128, Affine(128), ReLU,
/// Residual(Linear 128->128, ReLU), Linear 128->10, LogSoftMax.
nn::ModulePtr mlp();

}  // namespace my

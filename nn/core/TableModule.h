// nn::TableModule<Base>: the base of a module that takes or returns tables (Note [Tensors
// and activities] in nn/core/Module.h). It overrides the activity passes; its tensor passes are
// these, which run the activity passes on the tensor and return the result where it is a
// tensor (an nn::Error naming the table where it is one). Base is Module or Container.
#pragma once

#include "nn/core/Module.h"

namespace nn {

template <typename Base = Module>
class TableModule : public Base {
 public:
  const Tensor& updateOutput(const Tensor& input) final {
    return tensorResult(this->updateOutputActivity(Activity(input)), "output");
  }
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final {
    return tensorResult(this->updateGradInputActivity(Activity(input), Activity(gradOutput)), "gradInput");
  }
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) final {
    this->accGradParametersActivity(Activity(input), Activity(gradOutput), scale);
  }

  const Activity& updateOutputActivity(const Activity& input) override = 0;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override = 0;
  /// Nothing, for a module without parameters (Module's would call the tensor pass above).
  void accGradParametersActivity(const Activity&, const Activity&, float) override {}

 protected:
  using Base::Base;

 private:
  const Tensor& tensorResult(const Activity& result, const char* what) const {
    NN_CHECK(result.isTensor(), this->toString() << ": its " << what << " is the table " << result.describe()
                                                 << ", not a tensor; pass an nn::Activity to forward and backward");
    return result.tensor();
  }
};

/// The name of TableModule before the library's folders by layer; kept for one release.
template <typename Base>
using ActivityModule [[deprecated("nn::ActivityModule is now nn::TableModule, in nn/core/TableModule.h")]] =
    TableModule<Base>;

}  // namespace nn

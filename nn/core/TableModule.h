// nn::TableModule<Base>: the base of a module that takes or returns tables (Note [Tensors
// and activities] in nn/core/Module.h). It overrides the activity passes; its tensor passes are
// these, which run the activity passes on the tensor and return the result where it is a
// tensor (an nn::Error naming the table where it is one). Base is Module or Container.
#pragma once

#include "nn/core/Module.h"

namespace nn {

/// The base of a module whose input or output may be a table (see the top of this file): it
/// implements the activity passes, and the tensor passes go through them.
template <typename Base = Module>
class TableModule : public Base {
 public:
  /// updateOutputActivity on the tensor; returns the result where it is a tensor, an nn::Error
  /// where it is a table (pass an nn::Activity to forward instead).
  const Tensor& updateOutput(const Tensor& input) final {
    return tensorResult(this->updateOutputActivity(Activity(input)), "output");
  }
  /// updateGradInputActivity on the tensors; returns the result where it is a tensor, an
  /// nn::Error where it is a table.
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final {
    return tensorResult(this->updateGradInputActivity(Activity(input), Activity(gradOutput)), "gradInput");
  }
  /// accGradParametersActivity on the tensors.
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) final {
    this->accGradParametersActivity(Activity(input), Activity(gradOutput), scale);
  }

  /// The module's forward on a tensor or a table: computes the result, keeps it as
  /// outputActivity() and returns it. Every table module defines it.
  const Activity& updateOutputActivity(const Activity& input) override = 0;
  /// The module's updateGradInput on a tensor or a table: gradInput of `input`'s shape from
  /// gradOutput of the output's, kept as gradInputActivity() and returned. Every table module defines it.
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override = 0;
  /// Nothing, for a module without parameters (Module's would call the tensor pass above).
  void accGradParametersActivity(const Activity&, const Activity&, float) override {}

 protected:
  using Base::Base;

  /// The activity passes together (backwardPassesActivity, which a table may override), as
  /// backward on a tensor; returns gradInput.
  const Tensor& backwardPasses(const Tensor& input, const Tensor& gradOutput, float scale) final {
    tensorResult(this->backwardPassesActivity(Activity(input), Activity(gradOutput), scale), "gradInput");
    return this->gradInput;
  }

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

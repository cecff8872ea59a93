// nn::ActivationModule: what the element-wise activation modules share (ReLU, Tanh, Sigmoid,
// ...): shape and device checks, buffer sizes and the in-place variant, around one call to the
// activation's entry of the ElementwiseKernels of the input's device. A module says only which
// entry, with which parameters (nn/math/Activation.h), and whether it works in place.
#pragma once

#include "nn/backend/ElementwiseKernels.h"
#include "nn/core/Module.h"

namespace nn {

/// The base of the element-wise activation modules; a subclass names its formula and arguments.
class ActivationModule : public Module {
 public:
  /// The activation's entry in ElementwiseKernels::activations, by its formula's type:
  /// `Entry::of<math::activation::ReLU>()`.
  struct Entry {
    /// The formula's place in math::activation::All, and so in ElementwiseKernels::activations.
    int index;
    /// The entry of formula F (a type of math::activation, listed in All).
    template <typename F>
    static constexpr Entry of() {
      return Entry{math::activation::indexOf<F>()};
    }
  };

  /// Out of place: output = f(input), gradInput = f'(input) gradOutput, in buffers of the
  /// module. In place: the output is the input, overwritten, and gradInput is gradOutput,
  /// overwritten (Torch7's nn.ReLU(true)); both must be contiguous. It saves a buffer and a
  /// pass over memory each way; the module before must not need its output again, nor the
  /// module after its gradInput.
  const Tensor& updateOutput(const Tensor& input) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final;
  /// Whether the module works in place (its constructor's `inplace`; see updateOutput).
  bool inplace() const { return inplace_; }
  /// In place only: whether the module before applies this module's formula in its own passes
  /// (a batch normalisation before ReLU, Note [Batch normalisation, then ReLU] in
  /// nn/math/BatchNorm.h): the input, already the output, becomes the output and gradOutput,
  /// which the module before takes back through the formula, becomes gradInput, each without a
  /// pass. A Sequential sets it around the passes of such a pair, and clears it after.
  void setAppliedBefore(bool applied);

 protected:
  /// In place only for a formula whose backward may read the output for the input (kInPlace).
  ActivationModule(Entry entry, const math::ActivationArgs& args, bool inplace)
      : entry_(entry), args_(args), inplace_(inplace) {}

 private:
  Entry entry_;
  math::ActivationArgs args_;
  bool inplace_;
  bool appliedBefore_ = false;
};

}  // namespace nn

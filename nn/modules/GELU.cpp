// nn::GELU: the formulas are math::activation::GELU and GELUTanh, the loops their entries of
// ElementwiseKernels.
#include "nn/modules/GELU.h"

namespace nn {

NN_REGISTER_MODULE(GELU);

namespace {

// The formula of the form `approximate`, checked before the base class takes its entry.
ActivationModule::Entry formulaOf(const std::string& approximate) {
  NN_CHECK(approximate == "none" || approximate == "tanh",
           "nn.GELU: expected approximate 'none' or 'tanh', got '" << approximate << "'");
  return approximate == "tanh" ? ActivationModule::Entry::of<math::activation::GELUTanh>()
                               : ActivationModule::Entry::of<math::activation::GELU>();
}

}  // namespace

GELU::GELU(const Options& options)
    : WithOptions(options, formulaOf(options.approximate), math::ActivationArgs{}, false) {}

}  // namespace nn

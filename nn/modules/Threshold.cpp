// nn::Threshold: the formula is math::activation::Threshold, the loops its entry of
// ElementwiseKernels.
#include "nn/modules/Threshold.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(Threshold);

Threshold::Threshold(const Options& options)
    : WithOptions(options, Entry::of<math::activation::Threshold>(), math::ActivationArgs{options.threshold, options.value},
                  options.inplace) {
  NN_CHECK(std::isfinite(options.threshold) && std::isfinite(options.value),
           "nn.Threshold: expected a finite threshold and value, got " << options.threshold << " and "
                                                                       << options.value);
  // In place, the backward tells x > th from y, which a value above the threshold would fake.
  NN_CHECK(!options.inplace || options.value <= options.threshold,
           "nn.Threshold: in place needs value <= threshold, got value " << options.value << " and threshold "
                                                                         << options.threshold);
}

}  // namespace nn

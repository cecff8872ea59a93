// Test support for element-wise activations (tests/*relu_test.cpp, elu_test.cpp): inputs away
// from a kink, the in-place network a gradient check runs them in, and a save-and-load round.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "nn/core/Module.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

namespace nn::test {

/// [3, 11] values uniform in [low, high) from `seed`, moved to at least 0.05 from 0: where
/// central differences of step 1e-2 see no kink.
Tensor awayFromZero(uint64_t seed, float low, float high);
/// The same, moved to at least 0.05 from each of `kinks`.
Tensor awayFromKinks(uint64_t seed, float low, float high, std::initializer_list<float> kinks);

/// The output and gradInput of `module` (an activation, in place or not) for the vectors x and
/// g on the kind's device; checks that in place the input and gradOutput were overwritten with
/// them and that out of place they were left as they were.
std::pair<std::vector<float>, std::vector<float>> runPasses(const DeviceKind& kind, Module& module,
                                                            const std::vector<float>& x, const std::vector<float>& g,
                                                            bool inplace);

/// Each element of `got` within `ulps` units in the last place of float rounding at the size
/// of `want`'s (exactly, for ulps 0).
void checkWithinUlps(const std::vector<float>& got, const std::vector<float>& want, int ulps);

/// The input-gradient check of `activation` in place between two Linear layers on the kind's
/// device, as it is used: it overwrites the first layer's output, which that layer does not
/// read again, and the second layer's gradInput. The first layer is the identity, so that its
/// outputs keep the input's distance from 0. `input` is [3, 11].
GradientCheck checkInPlaceInNetwork(const DeviceKind& kind, const ModulePtr& activation, const Tensor& input);

/// `module` saved with nn::save and loaded with nn::load.
ModulePtr savedAndLoaded(Module& module);
/// Saved and loaded, and cloned, `module` keeps its type, settings, parameters and results:
/// each copy on the kind's device gives the module's output for x.
void checkCopies(const DeviceKind& kind, Module& module, const Tensor& x);
/// The module's output and gradInput, on the kind's device, for the reference scripts' exact
/// input of `sizes` and gradOutput (exactValues 5, 17, 8, 8 and 7, 13, 6, 4), within `ulps` of
/// PyTorch's.
void checkExactPasses(const DeviceKind& kind, Module& module, const std::vector<int64_t>& sizes,
                      const std::vector<float>& output, const std::vector<float>& gradInput, int ulps);

}  // namespace nn::test

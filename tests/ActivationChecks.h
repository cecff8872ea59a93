// Test support for element-wise activations (tests/*relu_test.cpp, elu_test.cpp): inputs away
// from a kink, the in-place network a gradient check runs them in, and a save-and-load round.
#pragma once

#include <cstdint>

#include "nn/Module.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"

namespace nn::test {

/// [3, 11] values uniform in [low, high) from `seed`, moved to at least 0.05 from 0: where
/// central differences of step 1e-2 see no kink.
Tensor awayFromZero(uint64_t seed, float low, float high);

/// The input-gradient check of `activation` in place between two Linear layers on the kind's
/// device, as it is used: it overwrites the first layer's output, which that layer does not
/// read again, and the second layer's gradInput. The first layer is the identity, so that its
/// outputs keep the input's distance from 0. `input` is [3, 11].
GradientCheck checkInPlaceInNetwork(const DeviceKind& kind, const ModulePtr& activation, const Tensor& input);

/// `module` saved with nn::save and loaded with nn::load.
ModulePtr savedAndLoaded(Module& module);

}  // namespace nn::test

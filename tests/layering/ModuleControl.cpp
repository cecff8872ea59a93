// What a module may include: the core, the backend interface, the formulas. Builds.
#include "nn/backend/Backend.h"
#include "nn/core/Module.h"
#include "nn/math/Activation.h"

namespace nn::layering {

bool hasLinear(const Device& device) { return kernelsOf(device).linear.updateOutput != nullptr; }

}  // namespace nn::layering

// The core reaching up into a module: must not build (tools/check-layers.sh).
#include "nn/core/Module.h"
// Last, so that the failure is this include's.
#include "nn/modules/Linear.h"

namespace nn::layering {

ModulePtr makeLinear() { return std::make_shared<Linear>(2, 3); }

}  // namespace nn::layering

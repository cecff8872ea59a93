// nn::SpatialBatchNormalization: its registration; the loops are BatchNormalization's.
#include "nn/SpatialBatchNormalization.h"

namespace nn {

NN_REGISTER_MODULE(SpatialBatchNormalization);

ModulePtr SpatialBatchNormalization::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<SpatialBatchNormalization>(c.integer("nOutput"), static_cast<float>(c.number("eps")),
                                                     static_cast<float>(c.number("momentum")), c.flag("affine"));
}

}  // namespace nn

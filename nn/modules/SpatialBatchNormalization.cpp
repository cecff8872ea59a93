// nn::SpatialBatchNormalization: its registration; the loops are BatchNormalization's.
#include "nn/modules/SpatialBatchNormalization.h"

namespace nn {

NN_REGISTER_MODULE(SpatialBatchNormalization);

}  // namespace nn

// nn::SpatialBatchNormalization: its registration; the loops are BatchNormalization's.
#include "nn/SpatialBatchNormalization.h"

namespace nn {

NN_REGISTER_MODULE(SpatialBatchNormalization);

}  // namespace nn

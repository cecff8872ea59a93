// The models' shared layers.
#include "nn/models/Layers.h"

#include <memory>

#include "nn/modules/SpatialConvolution.h"

namespace nn::models {

ModulePtr convolution(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t groups) {
  SpatialConvolution::Options o;
  o.nInputPlane = in;
  o.nOutputPlane = out;
  o.kW = o.kH = kernel;
  o.dW = o.dH = stride;
  o.padW = o.padH = pad;
  o.groups = groups;
  o.bias = false;
  return std::make_shared<SpatialConvolution>(o);
}

}  // namespace nn::models

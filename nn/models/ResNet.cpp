// torchvision's ResNets from Torch7's modules, under torchvision's names.
#include "nn/models/ResNet.h"

#include <memory>
#include <string>
#include <vector>

#include "nn/models/Layers.h"
#include "nn/modules/CAddTable.h"
#include "nn/modules/ConcatTable.h"
#include "nn/modules/Identity.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialAdaptiveAveragePooling.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/SpatialMaxPooling.h"
#include "nn/modules/View.h"

namespace nn::models {

namespace {

ModulePtr conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad) {
  return convolution(in, out, kernel, stride, pad);
}

ModulePtr norm(int64_t planes) { return std::make_shared<SpatialBatchNormalization>(planes); }

ModulePtr relu() { return std::make_shared<ReLU>(true); }

// The block around `layers`: their sum with the shortcut (the input, or its projection where the
// planes or the stride change), rectified.
ModulePtr residual(std::shared_ptr<Sequential> layers, int64_t in, int64_t out, int64_t stride) {
  auto paths = std::make_shared<ConcatTable>();
  paths->add("", std::move(layers));
  if (stride != 1 || in != out) {
    auto downsample = std::make_shared<Sequential>();
    downsample->add(conv(in, out, 1, stride, 0));
    downsample->add(norm(out));
    paths->add("downsample", downsample);
  } else {
    paths->add("identity", std::make_shared<Identity>());
  }
  auto block = std::make_shared<Sequential>();
  block->add("", paths);
  block->add("add", std::make_shared<CAddTable>());
  block->add("relu", relu());
  return block;
}

// torchvision's BasicBlock: two 3x3 convolutions, the first with the block's stride.
ModulePtr basicBlock(int64_t in, int64_t planes, int64_t stride) {
  auto layers = std::make_shared<Sequential>();
  layers->add("conv1", conv(in, planes, 3, stride, 1));
  layers->add("bn1", norm(planes));
  layers->add("relu", relu());
  layers->add("conv2", conv(planes, planes, 3, 1, 1));
  layers->add("bn2", norm(planes));
  return residual(layers, in, planes, stride);
}

// torchvision's Bottleneck: 1x1 down to `planes`, 3x3 with the block's stride, 1x1 up to 4 planes.
ModulePtr bottleneck(int64_t in, int64_t planes, int64_t stride) {
  auto layers = std::make_shared<Sequential>();
  layers->add("conv1", conv(in, planes, 1, 1, 0));
  layers->add("bn1", norm(planes));
  layers->add("relu", relu());
  layers->add("conv2", conv(planes, planes, 3, stride, 1));
  layers->add("bn2", norm(planes));
  layers->add("relu2", relu());
  layers->add("conv3", conv(planes, 4 * planes, 1, 1, 0));
  layers->add("bn3", norm(4 * planes));
  return residual(layers, in, 4 * planes, stride);
}

ModulePtr resnet(bool bottlenecks, const std::vector<int64_t>& blocks, int64_t numClasses) {
  const int64_t expansion = bottlenecks ? 4 : 1;
  auto net = std::make_shared<Sequential>();
  net->add("conv1", conv(3, 64, 7, 2, 3));
  net->add("bn1", norm(64));
  net->add("relu", relu());
  net->add("maxpool", std::make_shared<SpatialMaxPooling>(3, 3, 2, 2, 1, 1));
  int64_t in = 64;
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    const int64_t planes = int64_t{64} << stage;
    auto layer = std::make_shared<Sequential>();
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = b == 0 && stage > 0 ? 2 : 1;
      layer->add(bottlenecks ? bottleneck(in, planes, stride) : basicBlock(in, planes, stride));
      in = planes * expansion;
    }
    net->add("layer" + std::to_string(stage + 1), layer);
  }
  net->add("avgpool", std::make_shared<SpatialAdaptiveAveragePooling>(1, 1));
  net->add("flatten", std::make_shared<View>(std::vector<int64_t>{-1, in}));
  net->add("fc", std::make_shared<Linear>(in, numClasses));
  return net;
}

}  // namespace

ModulePtr resnet18(int64_t numClasses) { return resnet(false, {2, 2, 2, 2}, numClasses); }

ModulePtr resnet34(int64_t numClasses) { return resnet(false, {3, 4, 6, 3}, numClasses); }

ModulePtr resnet50(int64_t numClasses) { return resnet(true, {3, 4, 6, 3}, numClasses); }

}  // namespace nn::models

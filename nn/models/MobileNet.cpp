// torchvision's MobileNetV2 from Torch7's modules, under torchvision's names.
#include "nn/models/MobileNet.h"

#include <memory>
#include <string>
#include <vector>

#include "nn/models/Layers.h"
#include "nn/modules/CAddTable.h"
#include "nn/modules/ConcatTable.h"
#include "nn/modules/Dropout.h"
#include "nn/modules/Identity.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU6.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialAdaptiveAveragePooling.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/View.h"

namespace nn::models {

namespace {

// A convolution without a bias, `groups` groups, padded to keep the size at stride 1.
ModulePtr conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups) {
  return convolution(in, out, kernel, stride, (kernel - 1) / 2, groups);
}

// torchvision's Conv2dNormActivation: convolution, batch normalisation, ReLU6 ("0", "1", "2").
std::shared_ptr<Sequential> convNormActivation(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                               int64_t groups) {
  auto block = std::make_shared<Sequential>();
  block->add(conv(in, out, kernel, stride, groups));
  block->add(std::make_shared<SpatialBatchNormalization>(out));
  block->add(std::make_shared<ReLU6>(true));
  return block;
}

// torchvision's InvertedResidual: a 1x1 expansion to `expand` times the planes (none at 1), a
// depthwise 3x3 with the stride, a linear 1x1 projection; the input added where it fits.
ModulePtr invertedResidual(int64_t in, int64_t out, int64_t stride, int64_t expand) {
  const int64_t hidden = in * expand;
  auto layers = std::make_shared<Sequential>();
  if (expand != 1) layers->add(convNormActivation(in, hidden, 1, 1, 1));
  layers->add(convNormActivation(hidden, hidden, 3, stride, hidden));
  layers->add(conv(hidden, out, 1, 1, 1));
  layers->add(std::make_shared<SpatialBatchNormalization>(out));
  auto block = std::make_shared<Sequential>();
  if (stride != 1 || in != out) {
    block->add("conv", layers);
    return block;
  }
  auto named = std::make_shared<Sequential>();
  named->add("conv", layers);
  auto paths = std::make_shared<ConcatTable>();
  paths->add("", named);
  paths->add("identity", std::make_shared<Identity>());
  block->add("", paths);
  block->add("add", std::make_shared<CAddTable>());
  return block;
}

}  // namespace

ModulePtr mobilenetV2(int64_t numClasses) {
  // torchvision's table: expansion t, planes c, blocks n, the first block's stride s.
  struct Stage {
    int64_t t, c, n, s;
  };
  const std::vector<Stage> stages{{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
  auto features = std::make_shared<Sequential>();
  features->add(convNormActivation(3, 32, 3, 2, 1));
  int64_t in = 32;
  for (const Stage& stage : stages)
    for (int64_t b = 0; b < stage.n; ++b) {
      features->add(invertedResidual(in, stage.c, b == 0 ? stage.s : 1, stage.t));
      in = stage.c;
    }
  const int64_t last = 1280;
  features->add(convNormActivation(in, last, 1, 1, 1));
  auto classifier = std::make_shared<Sequential>();
  classifier->add(std::make_shared<Dropout>(0.2f));
  classifier->add(std::make_shared<Linear>(last, numClasses));
  auto net = std::make_shared<Sequential>();
  net->add("features", features);
  net->add("avgpool", std::make_shared<SpatialAdaptiveAveragePooling>(1, 1));
  net->add("flatten", std::make_shared<View>(std::vector<int64_t>{-1, last}));
  net->add("classifier", classifier);
  return net;
}

}  // namespace nn::models

// Fine-tuning a model one already has: torchvision's ResNet or MobileNetV2 weights (its
// state_dict() saved by safetensors.torch.save_file, any dtype) or a Lua Torch model (torch.save's
// .t7), its classifier replaced by one for the classes of an image folder, trained on several
// devices through a DataParallelTable, saved, and exported to ONNX.
//
//   finetune --weights resnet18.safetensors --images DIR --devices cpu:0,cpu:1 --epochs 3
//            --save tuned.safetensors --export-onnx tuned.onnx
//
// DIR/train and DIR/test hold a folder of pictures per class (torchvision's ImageFolder). The
// pictures are resized to --size (224) and standardised with ImageNet's mean and deviation, as
// torchvision's weights expect. `finetune --help` lists the options.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cunn/cunn.h"
#include "nn/models/MobileNet.h"
#include "nn/models/ResNet.h"
#include "nn/nn.h"
#include "nn/onnx/Export.h"

namespace {

struct Options {
  std::string weights, images, save, exportOnnx, arch = "resnet18", devices = "cpu:0";
  int64_t epochs = 3, batchSize = 32, size = 224, channels = 3;
  double learningRate = 0.01;
};

const char* kUsage =
    "Usage: finetune --weights FILE --images DIR [options]\n"
    "  --weights FILE      torchvision's state_dict() as safetensors (loaded into --arch), or a Lua\n"
    "                      Torch model (.t7); its classifier is replaced for DIR's classes\n"
    "  --images DIR        DIR/train and DIR/test: a folder of pictures per class\n"
    "  --arch NAME         resnet18, resnet34, resnet50 or mobilenet_v2, for a safetensors file (resnet18)\n"
    "  --devices LIST      e.g. cpu:0,cpu:1 or cuda:0,cuda:1: a DataParallelTable over them (cpu:0)\n"
    "  --epochs N          (3)\n"
    "  --batch-size N      global mini-batch size (32)\n"
    "  --size N            pictures resized to N x N (224)\n"
    "  --channels N        3 (colour, standardised as ImageNet's) or 1 (grey, as Torch7's MNIST models) (3)\n"
    "  --lr X              SGD's learning rate, momentum 0.9 (0.01)\n"
    "  --save FILE         the fine-tuned model, as nn::save writes it\n"
    "  --export-onnx FILE  the fine-tuned model as an ONNX model\n";

bool endsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    NN_CHECK(i + 1 < argc, "finetune: option " << arg << " needs a value\n" << kUsage);
    const std::string value = argv[++i];
    const auto count = [&] {
      char* end = nullptr;
      const long long n = std::strtoll(value.c_str(), &end, 10);
      NN_CHECK(*end == '\0' && n > 0 && n <= (1 << 20), "finetune: " << arg << " expects a positive count, got '"
                                                                      << value << "'");
      return static_cast<int64_t>(n);
    };
    if (arg == "--weights") {
      o.weights = value;
    } else if (arg == "--images") {
      o.images = value;
    } else if (arg == "--arch") {
      o.arch = value;
    } else if (arg == "--devices") {
      o.devices = value;
    } else if (arg == "--epochs") {
      o.epochs = count();
    } else if (arg == "--batch-size") {
      o.batchSize = count();
    } else if (arg == "--size") {
      o.size = count();
    } else if (arg == "--channels") {
      o.channels = count();
      NN_CHECK(o.channels == 1 || o.channels == 3, "finetune: --channels expects 1 or 3, got " << o.channels);
    } else if (arg == "--lr") {
      char* end = nullptr;
      o.learningRate = std::strtod(value.c_str(), &end);
      NN_CHECK(*end == '\0' && o.learningRate > 0, "finetune: --lr expects a positive number, got '" << value << "'");
    } else if (arg == "--save") {
      o.save = value;
    } else if (arg == "--export-onnx") {
      o.exportOnnx = value;
    } else {
      NN_CHECK(false, "finetune: unknown option " << arg << "\n" << kUsage);
    }
  }
  NN_CHECK(!o.weights.empty() && !o.images.empty(), "finetune: --weights and --images are needed\n" << kUsage);
  NN_CHECK(o.arch == "resnet18" || o.arch == "resnet34" || o.arch == "resnet50" || o.arch == "mobilenet_v2",
           "finetune: --arch expects resnet18, resnet34, resnet50 or mobilenet_v2, got '" << o.arch << "'");
  NN_CHECK(o.channels == 3 || endsWith(o.weights, ".t7"),
           "finetune: torchvision's models take colour pictures: --channels 3 with a safetensors file");
  return o;
}


// A Lua Torch model whose last Linear (before any softmax) becomes one of `classes` outputs.
nn::ModulePtr torch7Model(const std::string& path, int64_t classes) {
  nn::ModulePtr model = nn::loadTorch7(path);
  auto seq = std::dynamic_pointer_cast<nn::Sequential>(model);
  NN_CHECK(seq != nullptr, "finetune: " << path << " holds " << model->typeName() << ", not an nn.Sequential");
  for (size_t i = seq->size(); i-- > 0;)
    if (auto linear = std::dynamic_pointer_cast<nn::Linear>(seq->get(i))) {
      std::printf("replaced (%zu) %s by nn.Linear(%lld -> %lld)\n", i + 1, linear->toString().c_str(),
                  static_cast<long long>(linear->options().inputSize), static_cast<long long>(classes));
      seq->remove(i);
      seq->insert(std::make_shared<nn::Linear>(linear->options().inputSize, classes), i);
      return model;
    }
  NN_CHECK(false, "finetune: " << path << " has no nn.Linear at its top level to replace");
  return model;
}

// torchvision's layout for `classes` outputs, its weights but the classifier's from the file.
nn::ModulePtr torchvisionModel(const Options& o, int64_t classes) {
  nn::ModulePtr model = o.arch == "mobilenet_v2" ? nn::models::mobilenetV2(classes)
                        : o.arch == "resnet50"   ? nn::models::resnet50(classes)
                        : o.arch == "resnet34"   ? nn::models::resnet34(classes)
                                                 : nn::models::resnet18(classes);
  // The classifier: the ResNets' fc, MobileNetV2's classifier (its dropout and Linear).
  const std::string classifier = o.arch == "mobilenet_v2" ? "classifier." : "fc.";
  nn::LoadOptions options;
  options.filter = [classifier](const std::string& name) { return name.rfind(classifier, 0) != 0; };
  std::printf("%s\n", nn::loadStateInto(*model, o.weights, options).toString().c_str());
  return model;
}

double accuracy(nn::Module& model, const std::shared_ptr<const nn::Dataset>& test, const nn::BatchTransform& t,
                int64_t batchSize, const nn::Device& device) {
  model.evaluate();
  nn::BatchOptions options{false, false, 0};
  options.transform = t;
  nn::BatchIterator batches(test, batchSize, options);
  double right = 0;
  nn::Tensor x, y;
  while (batches.next(x, y)) right += model.forward(x.to(device)).argmax(1).eq(y.to(device)).sum();
  model.training();
  return right / static_cast<double>(test->size());
}

int run(const Options& o) {
  std::cout << nn::cpuInfo() << std::endl;
  nn::ImageFolderOptions folder;
  folder.channels = o.channels;
  folder.height = folder.width = o.size;
  auto train = std::make_shared<nn::ImageFolder>(o.images + "/train", folder);
  auto test = std::make_shared<nn::ImageFolder>(o.images + "/test", folder);
  NN_CHECK(train->classes() == test->classes(), "finetune: " << o.images << "/train and " << o.images
                                                             << "/test hold other classes");
  const auto classes = static_cast<int64_t>(train->classes().size());
  std::printf("%lld classes, %lld training and %lld test pictures of %lldx%lld\n", static_cast<long long>(classes),
              static_cast<long long>(train->size()), static_cast<long long>(test->size()),
              static_cast<long long>(o.size), static_cast<long long>(o.size));

  nn::ModulePtr model = endsWith(o.weights, ".t7") ? torch7Model(o.weights, classes) : torchvisionModel(o, classes);
  // ImageNet's statistics, which torchvision's weights were trained with; grey pictures as
  // Torch7's MNIST examples took them, centred on 0.5.
  const nn::BatchTransform standardise = o.channels == 3
                                             ? nn::normalize({0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f})
                                             : nn::normalize({0.5f}, {0.5f});

  std::vector<nn::Device> devices;
  for (size_t at = 0; at <= o.devices.size();) {
    const size_t comma = std::min(o.devices.find(',', at), o.devices.size());
    devices.push_back(nn::Device::parse(o.devices.substr(at, comma - at)));
    at = comma + 1;
  }
  model->setGradInputNeeded(false);
  nn::ModulePtr trained = model;
  if (devices.size() > 1) {
    auto table = std::make_shared<nn::DataParallelTable>(0);
    table->add(model, devices);
    trained = table;
  } else {
    model->to(devices[0]);
  }
  std::cout << trained->toString() << std::endl;

  // A model that ends in a log-softmax (Torch7's classifiers) takes the negative log-likelihood.
  const auto* seq = dynamic_cast<const nn::Sequential*>(model.get());
  const bool logProbabilities = seq != nullptr && seq->size() > 0 && seq->get(seq->size() - 1)->typeName() ==
                                                                          "nn.LogSoftMax";
  nn::CrossEntropyCriterion crossEntropy;
  nn::ClassNLLCriterion negativeLogLikelihood;
  nn::Criterion& criterion = logProbabilities ? static_cast<nn::Criterion&>(negativeLogLikelihood) : crossEntropy;
  nn::SgdOptions sgdOptions;
  sgdOptions.learningRate = static_cast<float>(o.learningRate);
  sgdOptions.momentum = 0.9f;
  sgdOptions.weightDecay = 1e-4f;
  nn::SGD sgd(trained->getParameters(), sgdOptions);
  nn::BatchOptions batchOptions{true, false, 1};
  batchOptions.transform = standardise;
  nn::BatchIterator batches(train, o.batchSize, batchOptions);
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    double lossSum = 0;
    int64_t steps = 0;
    nn::Tensor x, y;
    while (batches.next(x, y)) {
      x = x.to(devices[0]);
      y = y.to(devices[0]);
      trained->zeroGradParameters();
      const nn::Tensor& out = trained->forward(x);
      lossSum += criterion.forward(out, y);
      trained->backward(x, criterion.backward(out, y));
      sgd.step();
      ++steps;
    }
    std::printf("epoch %lld  train loss %.4f  test accuracy %.4f\n", static_cast<long long>(epoch),
                lossSum / static_cast<double>(std::max<int64_t>(steps, 1)),
                accuracy(*trained, test, standardise, o.batchSize, devices[0]));
  }
  if (!o.save.empty()) {
    nn::save(*model, o.save);
    std::printf("saved %s\n", o.save.c_str());
  }
  if (!o.exportOnnx.empty()) {
    // The first replica holds the trained weights; the export runs it on its device.
    nn::BatchOptions one{false, false, 0};
    one.transform = standardise;
    nn::BatchIterator sample(test, 1, one);
    nn::Tensor x, y;
    sample.next(x, y);
    nn::exportOnnx(*model, x.to(devices[0]), o.exportOnnx);
    std::printf("exported %s\n", o.exportOnnx.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

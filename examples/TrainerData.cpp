// The training program's data: Fashion-MNIST or image folders (--data), standardised, the
// images that --flip mirrors, and the test accuracy.
#include "examples/TrainerParts.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "nn/distributed/Launch.h"

namespace examples::trainer {

namespace {

// --flip: whether image `index` of step `step` of `epoch` is mirrored, a hash of the four
// numbers (SplitMix64's finaliser): no state, so a resumed run mirrors the images an
// uninterrupted one does.
bool mirrored(uint64_t seed, int64_t epoch, int64_t step, int64_t index) {
  uint64_t z =
      seed ^ (static_cast<uint64_t>(epoch) << 48) ^ (static_cast<uint64_t>(step) << 20) ^ static_cast<uint64_t>(index);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return ((z ^ (z >> 31)) & 1) != 0;
}

// Fashion-MNIST's training set's mean and deviation: pixels to zero mean and unit variance.
constexpr float kMean = 0.2860f, kDeviation = 0.3530f;

void standardize(nn::Tensor& images) {
  float* p = images.data();
  for (int64_t i = 0, n = images.numel(); i < n; ++i) p[i] = (p[i] - kMean) / kDeviation;
}

}  // namespace

// Mirrors the chosen images of a host batch [N, C, H, W] left to right, in place.
void flipImages(nn::Tensor& images, uint64_t seed, int64_t epoch, int64_t step) {
  const int64_t n = images.size(0), width = images.size(3);
  const int64_t rows = images.numel() / (n * width);
  float* p = images.data();
  for (int64_t i = 0; i < n; ++i) {
    if (!mirrored(seed, epoch, step, i)) continue;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = p + (i * rows + r) * width;
      for (int64_t a = 0, b = width - 1; a < b; ++a, --b) std::swap(row[a], row[b]);
    }
  }
}

Data loadData(const Options& o, const std::string& program) {
  if (!o.data.empty()) {
    NN_CHECK(o.limit == 0, program << ": --limit applies to Fashion-MNIST, not to --data");
    nn::ImageFolderOptions options;
    options.channels = 1;
    options.height = nn::FashionMnist::kHeight;
    options.width = nn::FashionMnist::kWidth;
    auto train = std::make_shared<nn::ImageFolder>(o.data + "/train", options);
    auto test = std::make_shared<nn::ImageFolder>(o.data + "/test", options);
    NN_CHECK(train->classes() == test->classes() && train->classes().size() <= nn::FashionMnist::kClasses,
             program << ": expected the same classes, at most " << nn::FashionMnist::kClasses << ", in " << o.data
                     << "/train and " << o.data << "/test");
    std::string names;
    for (const std::string& c : train->classes()) names += (names.empty() ? "" : ", ") + c;
    std::printf("%zu classes (%s), %lld training and %lld test pictures\n", train->classes().size(), names.c_str(),
                static_cast<long long>(train->size()), static_cast<long long>(test->size()));
    uint64_t checksum = 0;
    for (const auto& [file, label] : train->samples()) {
      const std::string name = std::filesystem::path(file).lexically_relative(o.data).string();
      const int64_t bytes[2] = {label, static_cast<int64_t>(std::filesystem::file_size(file))};
      checksum = nn::checksum64(bytes, sizeof bytes, nn::checksum64(name.data(), name.size(), checksum));
    }
    return {train, test, nn::normalize({kMean}, {kDeviation}), checksum};
  }
  nn::FashionMnist train(nn::FashionMnist::Split::Train, o.dataDir);
  nn::FashionMnist test(nn::FashionMnist::Split::Test, o.dataDir);
  standardize(train.images);
  standardize(test.images);
  if (o.limit > 0 && o.limit < train.size()) {
    train.images = train.images.narrow(0, 0, o.limit);
    train.labels = train.labels.narrow(0, 0, o.limit);
  }
  const nn::Tensor images = train.images.contiguous(), labels = train.labels.contiguous();
  const uint64_t checksum = nn::checksum64(labels.data(), sizeof(float) * labels.numel(),
                                           nn::checksum64(images.data(), sizeof(float) * images.numel()));
  return {std::make_shared<nn::TensorDataset>(train.images, train.labels),
          std::make_shared<nn::TensorDataset>(test.images, test.labels), nullptr, checksum};
}

// The first n samples of `set`, prepared as the batches are: an example input.
nn::Tensor firstSamples(const Data& data, int64_t n) {
  nn::BatchOptions options{false, false, 0};
  options.transform = data.transform;
  nn::BatchIterator batches(data.test, std::min(n, data.test->size()), options);
  nn::Tensor x, y;
  batches.next(x, y);
  return x;
}

// Fraction of test images whose most likely class is the label.
double accuracy(nn::Module& model, const Data& data, const nn::Device& device, nn::DType autocast) {
  const nn::Autocast scope(autocast);
  model.evaluate();
  nn::BatchOptions options{false, false, 0};
  options.transform = data.transform;
  nn::BatchIterator batches(data.test, 1000, options);
  nn::Tensor x, y;
  double correct = 0;
  while (batches.next(x, y)) correct += model.forward(x.to(device)).argmax(1).eq(y.to(device)).sum();
  model.training();
  return correct / static_cast<double>(data.test->size());
}

}  // namespace examples::trainer

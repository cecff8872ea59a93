// nn::FashionMnist: Zalando's Fashion-MNIST (28x28 grey pictures of clothes, 10 classes),
// read from its four IDX files into float tensors.
#pragma once

#include <cstdint>
#include <string>

#include "nn/tensor/Tensor.h"

namespace nn {

/// The Fashion-MNIST training or test split, loaded whole into two tensors (see TensorDataset to batch it).
class FashionMnist {
 public:
  /// The 60000 training or the 10000 test pictures.
  enum class Split { Train, Test };

  /// Where Debian's dataset-fashion-mnist package puts the files.
  static constexpr const char* kDefaultFolder = "/usr/share/datasets/fashion-mnist";
  /// Labels are 0 .. kClasses - 1.
  static constexpr int64_t kClasses = 10;
  /// Picture height in pixels.
  static constexpr int64_t kHeight = 28;
  /// Picture width in pixels.
  static constexpr int64_t kWidth = 28;

  /// Loads train-images-idx3-ubyte(.gz) and train-labels-idx1-ubyte(.gz), or the t10k-
  /// files for the test split, from `folder`; the gzip-compressed name is tried first.
  /// Checks that the images are 28x28, that there are as many labels as images and that
  /// every label is below 10; any problem is an nn::Error naming the file.
  explicit FashionMnist(Split split, const std::string& folder = kDefaultFolder);

  /// Number of samples.
  int64_t size() const { return labels.size(0); }
  /// "T-shirt/top", "Trouser", ... "Ankle boot", for labels 0 to 9.
  static const char* className(int64_t label);

  /// [N, 1, 28, 28] pixels scaled to [0, 1] (byte / 255), on cpu:0.
  Tensor images;
  /// [N] class indices 0 to 9, as floats (the target of ClassNLLCriterion), on cpu:0.
  Tensor labels;
};

}  // namespace nn

// nn::ImageFolder: a data set of pictures in one sub-folder per class, as torchvision's
// ImageFolder: root/<class>/**/<file>.png|.jpg|.jpeg, classes in sorted order with indices
// from 0, files sorted within each. Each sample is decoded when asked for (nn/data/Image.h: on a
// BatchIterator's background thread where it has one), converted to the chosen channels,
// resized (bilinear) and center-cropped to the chosen size, as [channels, height, width]
// floats in [0, 1]; its target is the class index. Random augmentation and normalisation are
// BatchIterator transforms (nn/data/ImageTransforms.h).
//
// Every file's header is read when the set is made (its first bytes, not the whole file): a
// file that is not a picture, one larger than maxPixels, a link that is broken or loops, a
// folder that cannot be listed, is an nn::Error naming it, or is skipped and counted where
// skipUnreadable (which also decodes each file whole, so that a truncated one is skipped too;
// a file larger than maxImageFileBytes of its header's sizes is not read).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/data/Dataset.h"
#include "nn/data/Image.h"

namespace nn {

/// How an ImageFolder makes its samples: channels, size, crop, and what it does with unreadable files.
struct ImageFolderOptions {
  /// 1 (grey) or 3 (RGB): every picture converted (nn::convertChannels); 0: the first
  /// picture's, which every other must then have.
  int64_t channels = 0;
  /// Every picture resized to height x width; 0 and 0: their own size, which they must share.
  int64_t height = 0;
  /// The width pictures are resized to, with height (0 with it: none).
  int64_t width = 0;
  /// Then its central cropHeight x cropWidth; 0 and 0: no crop.
  int64_t cropHeight = 0;
  /// The width of the central crop, with cropHeight (0 with it: no crop).
  int64_t cropWidth = 0;
  /// Skip (and count) files that cannot be decoded instead of refusing the folder.
  bool skipUnreadable = false;
  /// Pictures of more pixels are refused before they are decoded.
  int64_t maxPixels = kMaxImagePixels;
  /// Follow links to folders, below the root and as classes (as torchvision's ImageFolder, whose
  /// os.walk follows them): each folder is listed once, so a link to a folder above is no loop,
  /// but a link may bring in pictures from anywhere (a link to /usr/share would). false: links
  /// to folders are left out; links to files are read either way.
  bool followSymlinks = true;
};

/// torchvision's ImageFolder as an nn::Dataset: input [channels, height, width] in [0, 1], target the class.
class ImageFolder : public Dataset {
 public:
  /// Lists and checks every picture below `root` (its sub-folders are the classes); an nn::Error names a
  /// problem: no sub-folder, no picture, a bad option or file, sizes that differ where no option fixes them.
  explicit ImageFolder(const std::string& root, ImageFolderOptions options = {});

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  std::vector<int64_t> inputSizes() const override { return {channels_, height_, width_}; }
  std::vector<int64_t> targetSizes() const override { return {}; }
  void get(int64_t index, float* input, float* target) const override;

  /// The class names (the sub-folders), in index order.
  const std::vector<std::string>& classes() const { return classes_; }
  /// Each sample's file and class index.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }
  /// Files skipped as unreadable (skipUnreadable).
  int64_t skipped() const { return skipped_; }
  /// Sample `index` as [channels, height, width].
  Tensor image(int64_t index) const;

 private:
  ImageFolderOptions options_;
  std::vector<std::string> classes_;
  std::vector<std::pair<std::string, int64_t>> samples_;
  int64_t skipped_ = 0;
  int64_t channels_ = 0, height_ = 0, width_ = 0;
};

}  // namespace nn

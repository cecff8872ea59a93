#include "nn/data/ImageFolder.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "nn/core/Error.h"
#include "nn/data/ImageTransforms.h"

namespace nn {

namespace fs = std::filesystem;

namespace {

bool isPicture(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".png" || extension == ".jpg" || extension == ".jpeg";
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  NN_CHECK(in, path << ": cannot open the file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  NN_CHECK(!in.bad(), path << ": cannot read the file");
  return bytes;
}

// The pictures below `folder`, sorted by path.
std::vector<std::string> picturesBelow(const fs::path& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, fs::directory_options::follow_directory_symlink, error), end;
       !error && it != end; it.increment(error))
    if (it->is_regular_file() && isPicture(it->path())) files.push_back(it->path().string());
  NN_CHECK(!error, "nn::ImageFolder: cannot list " << folder.string() << ": " << error.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

ImageFolder::ImageFolder(const std::string& root, ImageFolderOptions options) : options_(options) {
  const ImageFolderOptions& o = options_;
  NN_CHECK(o.channels == 0 || o.channels == 1 || o.channels == 3,
           "nn::ImageFolder: expected 0, 1 or 3 channels, got " << o.channels);
  NN_CHECK(o.height >= 0 && o.width >= 0 && (o.height == 0) == (o.width == 0) && o.cropHeight >= 0 &&
               o.cropWidth >= 0 && (o.cropHeight == 0) == (o.cropWidth == 0),
           "nn::ImageFolder: expected a size and a crop of two positive numbers or of two zeros, got "
               << o.height << " x " << o.width << " and " << o.cropHeight << " x " << o.cropWidth);
  NN_CHECK(fs::is_directory(root), "nn::ImageFolder: " << root << " is not a folder");
  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(root))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  for (const fs::path& folder : folders) {
    const auto index = static_cast<int64_t>(classes_.size());
    classes_.push_back(folder.filename().string());
    for (const std::string& file : picturesBelow(folder)) {
      Image header;
      try {
        const std::string bytes = readFile(file);
        header = o.skipUnreadable ? decodeImage(bytes, file, o.maxPixels) : decodeImageHeader(bytes, file, o.maxPixels);
      } catch (const Error&) {
        if (!o.skipUnreadable) throw;
        ++skipped_;
        continue;
      }
      // The first picture sets what the others must match where no option fixes it.
      if (samples_.empty()) {
        channels_ = o.channels > 0 ? o.channels : header.channels;
        height_ = o.height > 0 ? o.height : header.height;
        width_ = o.width > 0 ? o.width : header.width;
      }
      NN_CHECK(o.channels > 0 || header.channels == channels_,
               file << ": " << header.channels << " channels where the first picture has " << channels_
                    << " (ImageFolderOptions::channels converts them)");
      NN_CHECK(o.height > 0 || (header.height == height_ && header.width == width_),
               file << ": " << header.height << " x " << header.width << " pixels where the first picture has "
                    << height_ << " x " << width_ << " (ImageFolderOptions::height and width resize them)");
      samples_.emplace_back(file, index);
    }
  }
  NN_CHECK(!classes_.empty(), "nn::ImageFolder: " << root << " has no sub-folder (one per class)");
  NN_CHECK(!samples_.empty(), "nn::ImageFolder: no PNG or JPEG file below " << root);
  if (o.cropHeight > 0) {
    NN_CHECK(o.cropHeight <= height_ && o.cropWidth <= width_,
             "nn::ImageFolder: a crop of " << o.cropHeight << " x " << o.cropWidth << " from pictures of " << height_
                                           << " x " << width_);
    height_ = o.cropHeight;
    width_ = o.cropWidth;
  }
}

Tensor ImageFolder::image(int64_t index) const {
  NN_CHECK(index >= 0 && index < size(), "nn::ImageFolder: no sample " << index << " of " << size());
  const std::string& file = samples_[static_cast<size_t>(index)].first;
  Image picture = readImage(file, options_.maxPixels);
  if (options_.channels > 0 && picture.channels != options_.channels)
    picture = convertChannels(picture, options_.channels);
  // Alpha is dropped where the picture has more channels than the set keeps.
  if (picture.channels != channels_) picture = convertChannels(picture, channels_);
  Tensor t = imageTensor(picture);
  if (options_.height > 0 && (t.size(1) != options_.height || t.size(2) != options_.width))
    t = resizeBilinear(t, options_.height, options_.width);
  if (options_.cropHeight > 0) t = centerCrop(t, options_.cropHeight, options_.cropWidth);
  NN_CHECK(t.sizes() == inputSizes(), file << ": a picture of " << t.shapeString() << " where the set's are "
                                           << shapeString(inputSizes()));
  return t;
}

void ImageFolder::get(int64_t index, float* input, float* target) const {
  const Tensor t = image(index);
  std::memcpy(input, t.data(), static_cast<size_t>(t.numel()) * sizeof(float));
  target[0] = static_cast<float>(samples_[static_cast<size_t>(index)].second);
}

}  // namespace nn

#include "nn/data/ImageFolder.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "nn/data/ImageTransforms.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace fs = std::filesystem;

namespace {

bool isPicture(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".png" || extension == ".jpg" || extension == ".jpeg";
}

// The pictures below a class's folder, and the entries that could not be read.
struct Listing {
  std::vector<std::string> files;
  // "path: why", for a picture's name that is a broken or looping link, or a folder that cannot
  // be listed.
  std::vector<std::string> unreadable;
};

// Adds the pictures below `folder` to `out`. Links to folders are followed where `follow`, each
// folder once (`visited`: device and inode), so that a link to a folder above is no loop.
void listPictures(const fs::path& folder, bool follow, std::set<std::pair<dev_t, ino_t>>& visited, Listing& out) {
  std::error_code error;
  fs::directory_iterator it(folder, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    std::error_code statError;
    const bool link = it->is_symlink(statError);
    const fs::file_status status = it->status(statError);  // through links
    if (statError) {
      if (isPicture(path)) out.unreadable.push_back(path.string() + ": " + statError.message());
      continue;
    }
    if (fs::is_directory(status)) {
      struct stat info;
      if (link && !follow) continue;
      if (::stat(path.c_str(), &info) != 0) {
        out.unreadable.push_back(path.string() + ": " + std::strerror(errno));
        continue;
      }
      if (visited.insert({info.st_dev, info.st_ino}).second) listPictures(path, follow, visited, out);
    } else if (fs::is_regular_file(status) && isPicture(path)) {
      out.files.push_back(path.string());
    }
  }
  if (error) out.unreadable.push_back(folder.string() + ": cannot list the folder: " + error.message());
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
  std::error_code error;
  NN_CHECK(fs::is_directory(root, error),
           "nn::ImageFolder: " << root << " is not a folder" << (error ? ": " + error.message() : std::string()));
  std::vector<fs::path> folders;
  fs::directory_iterator it(root, error), end;
  for (; !error && it != end; it.increment(error)) {
    std::error_code statError;
    if (it->is_directory(statError) && (o.followSymlinks || !it->is_symlink(statError))) folders.push_back(it->path());
  }
  NN_CHECK(!error, "nn::ImageFolder: cannot list " << root << ": " << error.message());
  std::sort(folders.begin(), folders.end());
  // The root and the classes' folders are listed as such, never again through a link below them.
  std::set<std::pair<dev_t, ino_t>> visited;
  for (const fs::path& folder : folders) {
    struct stat info;
    if (::stat(folder.c_str(), &info) == 0) visited.insert({info.st_dev, info.st_ino});
  }
  struct stat rootInfo;
  if (::stat(root.c_str(), &rootInfo) == 0) visited.insert({rootInfo.st_dev, rootInfo.st_ino});
  for (const fs::path& folder : folders) {
    const auto index = static_cast<int64_t>(classes_.size());
    classes_.push_back(folder.filename().string());
    Listing listing;
    listPictures(folder, o.followSymlinks, visited, listing);
    NN_CHECK(o.skipUnreadable || listing.unreadable.empty(),
             "nn::ImageFolder: " << listing.unreadable.front() << " (ImageFolderOptions::skipUnreadable skips it)");
    skipped_ += static_cast<int64_t>(listing.unreadable.size());
    std::sort(listing.files.begin(), listing.files.end());
    for (const std::string& file : listing.files) {
      Image header;
      try {
        header = o.skipUnreadable ? readImage(file, o.maxPixels) : readImageHeader(file, o.maxPixels);
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
  NN_CHECK(t.sizes() == inputSizes(),
           file << ": a picture of " << t.shapeString() << " where the set's are " << shapeString(inputSizes()));
  return t;
}

void ImageFolder::get(int64_t index, float* input, float* target) const {
  const Tensor t = image(index);
  std::memcpy(input, t.data(), static_cast<size_t>(t.numel()) * sizeof(float));
  target[0] = static_cast<float>(samples_[static_cast<size_t>(index)].second);
}

}  // namespace nn

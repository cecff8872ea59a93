// nn::FashionMnist: finds the split's two IDX files, checks them against each other and
// converts the bytes to floats.
#include "nn/data/FashionMnist.h"

#include <sys/stat.h>

#include "nn/data/IdxFile.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// The file's gzip-compressed name if it exists, else its plain name if that exists.
std::string findFile(const std::string& folder, const std::string& name) {
  const std::string plain = folder + "/" + name;
  const std::string gz = plain + ".gz";
  struct stat info;
  if (stat(gz.c_str(), &info) == 0) return gz;
  if (stat(plain.c_str(), &info) == 0) return plain;
  throw Error(gz + ": cannot open: no such file (nor " + plain + ")");
}

}  // namespace

FashionMnist::FashionMnist(Split split, const std::string& folder) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const std::string imagePath = findFile(folder, prefix + "-images-idx3-ubyte");
  const std::string labelPath = findFile(folder, prefix + "-labels-idx1-ubyte");

  // The two headers first, against each other: a file that declares more images than it
  // has labels costs nothing to refuse, before either body is inflated.
  const std::vector<int64_t> imageSizes = IdxFile::readSizes(imagePath, "image data");
  NN_CHECK(imageSizes.size() == 3 && imageSizes[1] == kHeight && imageSizes[2] == kWidth,
           imagePath << ": expected images of sizes [N, " << kHeight << ", " << kWidth << "], got "
                     << shapeString(imageSizes));
  const int64_t count = imageSizes[0];
  NN_CHECK(count > 0, imagePath << ": expected at least one image, got none");
  const std::vector<int64_t> labelSizes = IdxFile::readSizes(labelPath, "label data");
  NN_CHECK(labelSizes.size() == 1, labelPath << ": expected labels of sizes [N], got " << shapeString(labelSizes));
  NN_CHECK(labelSizes[0] == count, labelPath << ": expected " << count << " labels, one per image of " << imagePath
                                             << ", got " << labelSizes[0]);

  // The labels, the smaller body, before the images; each file's sizes must still be those
  // read above (a file replaced in between is refused, not read past).
  const IdxFile labelFile = IdxFile::read(labelPath, "label data");
  NN_CHECK(labelFile.sizes == labelSizes, labelPath << ": its sizes changed while it was read");

  labels = Tensor::empty({count});
  float* l = labels.data();
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t label = labelFile.data[static_cast<size_t>(i)];
    NN_CHECK(label < kClasses, labelPath << ": label " << int{label} << " of sample " << i
                                         << " is out of range, expected 0 to " << kClasses - 1);
    l[i] = static_cast<float>(label);
  }
  const IdxFile imageFile = IdxFile::read(imagePath, "image data");
  NN_CHECK(imageFile.sizes == imageSizes, imagePath << ": its sizes changed while it was read");
  images = Tensor::empty({count, 1, kHeight, kWidth});
  float* x = images.data();
  const uint8_t* bytes = imageFile.data.data();
  for (int64_t i = 0, n = images.numel(); i < n; ++i) x[i] = static_cast<float>(bytes[i]) / 255.0f;
}

const char* FashionMnist::className(int64_t label) {
  static const char* const names[kClasses] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  NN_CHECK(label >= 0 && label < kClasses,
           "nn.FashionMnist.className: expected a label from 0 to " << kClasses - 1 << ", got " << label);
  return names[label];
}

}  // namespace nn

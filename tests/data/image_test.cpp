// Pictures (nn/data/Image.h), their transforms (nn/data/ImageTransforms.h) and nn::ImageFolder: the
// committed pictures of tests/fixtures/images decoded to what Debian's python3-pil decodes them to
// (tests/fixtures/make_image_reference.py), pictures written here by libpng and libjpeg read back,
// hostile files refused, resize and crops against references computed in double, the random
// transforms stateless, folders read as torchvision reads them, and the residual network
// example learning two classes of generated pictures from a folder.
#include "nn/data/Image.h"

#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nn/data/ImageFolder.h"
#include "nn/data/ImageTransforms.h"
#include "nn/tensor/Error.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/ImageFiles.h"
#include "tests/support/TempDir.h"

namespace {

using nn::Tensor;

const std::string kFolder = "tests/fixtures/images/";

std::vector<int> numbers(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<int> v;
  for (int x; in >> x;) v.push_back(x);
  return v;
}

std::vector<uint8_t> pattern(int width, int height, int channels, int seed) {
  std::vector<uint8_t> v;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        v.push_back(static_cast<uint8_t>((x * 37 + y * 91 + c * 53 + seed * 17) % 256));
  return v;
}

std::string bytesOf(const std::string& path) { return nn::test::fileBytes(path); }

// A PNG whose header declares width x height (its CRC right), and nothing after.
std::string pngHeader(uint32_t width, uint32_t height) {
  std::string ihdr = "IHDR";
  for (uint32_t v : {width, height})
    for (int s = 24; s >= 0; s -= 8) ihdr += static_cast<char>((v >> s) & 0xff);
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // 8-bit grey
  // The CRC-32 (zlib's) of the chunk type and data.
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : ihdr) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
  }
  crc ^= 0xffffffffu;
  std::string png = "\x89PNG\r\n\x1a\n";
  png += std::string("\x00\x00\x00\x0d", 4) + ihdr;
  for (int s = 24; s >= 0; s -= 8) png += static_cast<char>((crc >> s) & 0xff);
  return png;
}

}  // namespace

TEST_CASE("decodeImage gives PIL's samples for PNGs of every kind and for JPEGs", "[Image]") {
  for (const std::string name : {"grey.png", "grey_alpha.png", "rgb.png", "rgba.png", "palette.png", "grey_1bit.png",
                                 "grey_16bit.png", "grey_jpeg.jpg", "rgb_jpeg.jpg"}) {
    INFO(name);
    const nn::Image image = nn::readImage(kFolder + name);
    const std::string stem = name.substr(0, name.find('.'));
    const std::vector<int> expected = numbers(kFolder + stem + ".expected");
    REQUIRE(expected.size() >= 3);
    REQUIRE(image.height == expected[0]);
    REQUIRE(image.width == expected[1]);
    REQUIRE(image.channels == expected[2]);
    REQUIRE(std::vector<int>(image.pixels.begin(), image.pixels.end()) ==
            std::vector<int>(expected.begin() + 3, expected.end()));
    if (std::filesystem::exists(kFolder + stem + ".grey")) {
      const nn::Image grey = nn::convertChannels(image, 1);
      REQUIRE(std::vector<int>(grey.pixels.begin(), grey.pixels.end()) == numbers(kFolder + stem + ".grey"));
    }
  }
}

TEST_CASE("imageTensor is [C, H, W] of the samples over 255; grey becomes RGB by repetition", "[Image]") {
  const nn::Image rgb = nn::readImage(kFolder + "rgb.png");
  const Tensor t = nn::imageTensor(rgb);
  REQUIRE(t.sizes() == std::vector<int64_t>{3, 5, 7});
  REQUIRE(t.at({1, 2, 3}) == static_cast<float>(rgb.pixels[(2 * 7 + 3) * 3 + 1]) / 255.0f);
  const nn::Image grey = nn::readImage(kFolder + "grey.png");
  const nn::Image three = nn::convertChannels(grey, 3);
  REQUIRE(three.channels == 3);
  for (size_t i = 0; i < grey.pixels.size(); ++i)
    for (size_t c = 0; c < 3; ++c) REQUIRE(three.pixels[3 * i + c] == grey.pixels[i]);
}

TEST_CASE("pictures written by libpng and libjpeg read back", "[Image]") {
  nn::test::TempDir dir;
  const int w = 13, h = 9;
  for (int channels : {1, 3, 4})
    for (bool sixteen : {false, true})
      for (bool interlaced : {false, true}) {
        CAPTURE(channels, sixteen, interlaced);
        const std::vector<uint8_t> samples = pattern(w, h, channels, channels);
        nn::test::writePng(dir.file("p.png"), w, h, channels, samples, sixteen, interlaced);
        const nn::Image image = nn::readImage(dir.file("p.png"));
        REQUIRE(image.channels == channels);
        REQUIRE(image.pixels == samples);
      }
  // A smooth picture at quality 100 comes back within a few levels.
  std::vector<uint8_t> smooth;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x)
      for (int c = 0; c < 3; ++c) smooth.push_back(static_cast<uint8_t>(40 + 8 * x + 4 * y + 10 * c));
  nn::test::writeJpeg(dir.file("p.jpg"), 16, 16, 3, smooth, 100);
  const nn::Image jpeg = nn::readImage(dir.file("p.jpg"));
  REQUIRE(jpeg.channels == 3);
  REQUIRE(jpeg.pixels.size() == smooth.size());
  for (size_t i = 0; i < smooth.size(); ++i) REQUIRE(std::abs(int(jpeg.pixels[i]) - int(smooth[i])) <= 3);
}

TEST_CASE("decodeImage refuses hostile and broken files, naming them", "[Image]") {
  const std::string png = bytesOf(kFolder + "rgb.png"), jpeg = bytesOf(kFolder + "rgb_jpeg.jpg");
  SECTION("not a picture") {
    REQUIRE_THROWS_WITH(nn::decodeImage("GIF89a....", "a.gif"),
                        Catch::Contains("a.gif") && Catch::Contains("not a PNG"));
    REQUIRE_THROWS_WITH(nn::decodeImage("", "empty.png"), Catch::Contains("empty.png"));
  }
  SECTION("truncated") {
    for (size_t keep : {size_t{8}, size_t{20}, png.size() / 2, png.size() - 13})
      REQUIRE_THROWS_WITH(nn::decodeImage(png.substr(0, keep), "cut.png"), Catch::Contains("cut.png"));
    for (size_t keep : {size_t{3}, size_t{30}, jpeg.size() / 2, jpeg.size() - 2})
      REQUIRE_THROWS_WITH(nn::decodeImage(jpeg.substr(0, keep), "cut.jpg"), Catch::Contains("cut.jpg"));
  }
  SECTION("corrupted") {
    std::string bad = png;
    bad[bad.size() / 2] ^= 0x5a;  // inside the image data: its CRC no longer holds
    REQUIRE_THROWS_WITH(nn::decodeImage(bad, "bad.png"), Catch::Contains("bad.png"));
  }
  SECTION("a small file declaring a huge picture is refused before it is decoded") {
    REQUIRE_THROWS_WITH(nn::decodeImage(pngHeader(100000, 100000), "bomb.png"),
                        Catch::Contains("bomb.png") && Catch::Contains("100000 x 100000"));
    REQUIRE_THROWS_WITH(nn::decodeImage(png, "small.png", 20), Catch::Contains("7 x 5") && Catch::Contains("20"));
    // The JPEG's frame header (SOF0: FF C0, length, precision, height, width) made 60000 x 60000.
    std::string big = jpeg;
    const size_t sof = big.find("\xff\xc0");
    REQUIRE(sof != std::string::npos);
    big[sof + 5] = big[sof + 7] = static_cast<char>(0xea);
    big[sof + 6] = big[sof + 8] = static_cast<char>(0x60);
    REQUIRE_THROWS_WITH(nn::decodeImage(big, "bomb.jpg"),
                        Catch::Contains("bomb.jpg") && Catch::Contains("60000 x 60000"));
  }
}

TEST_CASE("A progressive JPEG of too many scans is refused as it is read", "[Image]") {
  nn::test::TempDir dir;
  const std::vector<uint8_t> samples = pattern(32, 24, 3, 4);
  nn::test::writeProgressiveJpeg(dir.file("ten.jpg"), 32, 24, samples, false);
  nn::test::writeProgressiveJpeg(dir.file("many.jpg"), 32, 24, samples, true);
  // libjpeg's own progression reads back as the sequential picture of the same quality does.
  nn::test::writeJpeg(dir.file("plain.jpg"), 32, 24, 3, samples, 90);
  const nn::Image ten = nn::readImage(dir.file("ten.jpg")), plain = nn::readImage(dir.file("plain.jpg"));
  REQUIRE(ten.width == 32);
  REQUIRE(ten.height == 24);
  int64_t largest = 0;
  for (size_t i = 0; i < ten.pixels.size(); ++i)
    largest = std::max<int64_t>(largest, std::abs(ten.pixels[i] - plain.pixels[i]));
  CHECK(largest <= 8);
  // 190 scans: the header reads (one is needed to list a folder), the pixels are refused.
  CHECK(nn::readImageHeader(dir.file("many.jpg")).width == 32);
  REQUIRE_THROWS_WITH(nn::readImage(dir.file("many.jpg")),
                      Catch::Contains("many.jpg") && Catch::Contains("more than 100 scans"));
}

TEST_CASE("A picture's file is read only as far as its header until its size is checked", "[Image]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("sparse.png");
  nn::test::writePng(path, 28, 28, 1, pattern(28, 28, 1, 5));
  const nn::Image small = nn::readImage(path);
  // 1 GB, sparse: a 28 x 28 picture's file may have 16 MiB and 8 bytes a pixel.
  std::filesystem::resize_file(path, int64_t{1} << 30);
  REQUIRE_THROWS_WITH(nn::readImageHeader(path), Catch::Contains("sparse.png: 1073741824 bytes for a picture of "
                                                                 "28 x 28 pixels; at most 16783488 are read"));
  REQUIRE_THROWS_WITH(nn::readImage(path), Catch::Contains("1073741824 bytes"));
  // At the bound it is read (the bytes after the picture's end are libpng's to ignore).
  std::filesystem::resize_file(path, nn::maxImageFileBytes(28, 28));
  CHECK(nn::readImage(path).pixels == small.pixels);
  CHECK_THROWS_WITH(nn::maxImageFileBytes(int64_t{1} << 40, int64_t{1} << 40), Catch::Contains("expected the sizes"));
  // A FIFO would block a read for ever: refused before one.
  const std::string fifo = dir.file("fifo.png");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(nn::readImage(fifo), Catch::Contains("fifo.png: not a regular file"));
  // A header behind metadata is read from as much of the file as holds it.
  std::string png = bytesOf(kFolder + "rgb.png");
  std::string text = "tEXtComment";
  text += '\0';
  text += std::string(100000, 'x');
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : text) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
  }
  crc ^= 0xffffffffu;
  std::string chunk;
  for (uint32_t v : {static_cast<uint32_t>(text.size() - 4)})
    for (int shift = 24; shift >= 0; shift -= 8) chunk += static_cast<char>((v >> shift) & 0xff);
  chunk += text;
  for (int shift = 24; shift >= 0; shift -= 8) chunk += static_cast<char>((crc >> shift) & 0xff);
  png.insert(8 + 25, chunk);  // after the signature and IHDR (8 + 4 + 4 + 13 + 4 bytes)
  std::ofstream(dir.file("text.png"), std::ios::binary) << png;
  CHECK(nn::readImageHeader(dir.file("text.png")).width == nn::readImage(kFolder + "rgb.png").width);
  CHECK(nn::readImage(dir.file("text.png")).pixels == nn::readImage(kFolder + "rgb.png").pixels);
}

TEST_CASE("resizeBilinear is torchvision's bilinear resize without antialiasing", "[ImageTransforms]") {
  const int64_t c = 2, h = 5, w = 7;
  std::vector<float> values;
  for (int64_t i = 0; i < c * h * w; ++i) values.push_back(static_cast<float>(std::sin(0.7 * double(i)) * 3));
  const Tensor x = Tensor::fromVector({c, h, w}, values);
  for (auto [oh, ow] : {std::pair<int64_t, int64_t>{3, 4}, {9, 13}, {5, 7}, {1, 1}, {12, 3}}) {
    CAPTURE(oh, ow);
    const Tensor y = nn::resizeBilinear(x, oh, ow);
    REQUIRE(y.sizes() == std::vector<int64_t>{c, oh, ow});
    // In double: source (o + 0.5) in / out - 0.5, clamped at 0, between its two neighbours.
    auto src = [](int64_t o, int64_t in, int64_t out) {
      return std::max(0.0, (double(o) + 0.5) * double(in) / double(out) - 0.5);
    };
    for (int64_t k = 0; k < c; ++k)
      for (int64_t yo = 0; yo < oh; ++yo)
        for (int64_t xo = 0; xo < ow; ++xo) {
          const double sy = src(yo, h, oh), sx = src(xo, w, ow);
          const int64_t y0 = std::min(int64_t(sy), h - 1), x0 = std::min(int64_t(sx), w - 1);
          const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
          const double ly = sy - double(y0), lx = sx - double(x0);
          auto at = [&](int64_t yy, int64_t xx) { return double(values[size_t((k * h + yy) * w + xx)]); };
          const double expected =
              (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) + ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
          REQUIRE(std::fabs(double(y.at({k, yo, xo})) - expected) < 2e-6);
        }
  }
  // The same size: the same floats.
  REQUIRE(nn::resizeBilinear(x, h, w).toVector() == values);
}

TEST_CASE("centerCrop takes torchvision's central window", "[ImageTransforms]") {
  std::vector<float> values(3 * 6 * 7);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  const Tensor x = Tensor::fromVector({3, 6, 7}, values);
  const Tensor y = nn::centerCrop(x, 3, 4);
  REQUIRE(y.sizes() == std::vector<int64_t>{3, 3, 4});
  // top = round(1.5) = 2, left = round(1.5) = 2 (halves away from zero, as Python's int(round(.)) of torchvision's).
  REQUIRE(y.at({1, 0, 0}) == x.at({1, 2, 2}));
  REQUIRE(y.at({2, 2, 3}) == x.at({2, 4, 5}));
  REQUIRE_THROWS_WITH(nn::centerCrop(x, 7, 4), Catch::Contains("nn::centerCrop"));
}

TEST_CASE("the random transforms depend on (seed, epoch, batch, sample) alone", "[ImageTransforms]") {
  std::vector<float> values(4 * 2 * 5 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 17) + 1;
  const Tensor batch = Tensor::fromVector({4, 2, 5, 6}, values);
  Tensor target = Tensor::zeros({4});
  auto run = [&](nn::BatchTransform t, int64_t epoch, int64_t index) {
    Tensor x = batch.clone();
    t(x, target, epoch, index);
    return x.toVector();
  };
  for (auto make : {std::function<nn::BatchTransform()>([] { return nn::randomCrop(2, 9); }),
                    std::function<nn::BatchTransform()>([] { return nn::horizontalFlip(9); })}) {
    // Two transforms made alike give the same floats for the same batch, in any order.
    nn::BatchTransform a = make(), b = make();
    const std::vector<float> first = run(a, 3, 1);
    run(a, 0, 0);
    REQUIRE(run(b, 3, 1) == first);
    REQUIRE(run(a, 3, 1) == first);
    // Another batch or epoch, other draws; the values are the batch's, moved.
    REQUIRE((run(a, 3, 2) != first || run(a, 4, 1) != first));
  }
  // A flip mirrors each row of the samples it chose, and leaves the others.
  const std::vector<float> flipped = run(nn::horizontalFlip(9, 1.0), 0, 0);
  REQUIRE(flipped[0] == values[5]);
  REQUIRE(run(nn::horizontalFlip(9, 0.0), 0, 0) == values);
  // A crop with padding 0 is the identity.
  REQUIRE(run(nn::randomCrop(0, 1), 5, 5) == values);
  // normalize: (x - mean) / deviation per channel.
  const std::vector<float> normalised = run(nn::normalize({1.f, 2.f}, {2.f, 4.f}), 0, 0);
  REQUIRE(normalised[0] == (values[0] - 1.f) / 2.f);
  REQUIRE(normalised[30] == (values[30] - 2.f) / 4.f);
  REQUIRE_THROWS_WITH(run(nn::normalize({1.f}, {1.f}), 0, 0), Catch::Contains("nn::normalize"));
}

TEST_CASE("the random transforms draw for each sample, and a crop pads with zeros", "[ImageTransforms]") {
  // 32 copies of one sample [2, 5, 6] of values 1 to 17: what differs between the copies after a
  // transform is its draws.
  const int64_t n = 32, c = 2, h = 5, w = 6;
  std::vector<float> values;
  for (int64_t i = 0; i < n * c * h * w; ++i) values.push_back(float((i % (c * h * w)) % 17) + 1);
  Tensor target = Tensor::zeros({n});
  auto sample = [&](const std::vector<float>& v, int64_t s) {
    return std::vector<float>(v.begin() + s * c * h * w, v.begin() + (s + 1) * c * h * w);
  };
  // Flips: with p = 1/2 over 32 samples, some mirrored and some not.
  Tensor flipped = Tensor::fromVector({n, c, h, w}, values);
  nn::horizontalFlip(7)(flipped, target, 1, 2);
  std::set<std::vector<float>> flips;
  for (int64_t s = 0; s < n; ++s) flips.insert(sample(flipped.toVector(), s));
  CHECK(flips.size() == 2);
  // Crops with padding 2: each sample is the original moved by its own (dy, dx) in [-2, 2],
  // zeros where it moved in from outside (not the other side's values, as a wrap would give).
  Tensor cropped = Tensor::fromVector({n, c, h, w}, values);
  nn::randomCrop(2, 7)(cropped, target, 1, 2);
  const std::vector<float> original = sample(values, 0), out = cropped.toVector();
  std::set<std::pair<int, int>> shifts;
  for (int64_t s = 0; s < n; ++s) {
    CAPTURE(s);
    const std::vector<float> got = sample(out, s);
    bool found = false;
    for (int dy = -2; dy <= 2 && !found; ++dy)
      for (int dx = -2; dx <= 2 && !found; ++dx) {
        bool match = true;
        for (int64_t k = 0; k < c && match; ++k)
          for (int64_t y = 0; y < h && match; ++y)
            for (int64_t x = 0; x < w && match; ++x) {
              const int64_t sy = y + dy, sx = x + dx;
              const float expected = sy >= 0 && sy < h && sx >= 0 && sx < w ? original[(k * h + sy) * w + sx] : 0.f;
              match = got[(k * h + y) * w + x] == expected;
            }
        if (match) {
          found = true;
          shifts.insert({dy, dx});
        }
      }
    CHECK(found);
  }
  CHECK(shifts.size() > 3);
}

TEST_CASE("ImageFolder reads a folder per class, sorted, as torchvision's", "[ImageFolder]") {
  nn::test::TempDir dir;
  const std::string root = dir.file("pictures");
  // Created in an order other than the sorted one, which a folder may list them in.
  std::filesystem::create_directories(root + "/dog");
  nn::test::writePng(root + "/dog/c.png", 6, 4, 3, pattern(6, 4, 3, 4));
  nn::test::writePng(root + "/dog/b.png", 6, 4, 3, pattern(6, 4, 3, 1));
  std::filesystem::create_directories(root + "/dog/more");
  nn::test::writePng(root + "/dog/more/a.PNG", 6, 4, 1, pattern(6, 4, 1, 2));
  std::filesystem::create_directories(root + "/cat");
  nn::test::writeJpeg(root + "/cat/z.jpg", 6, 4, 3, pattern(6, 4, 3, 3));
  std::ofstream(root + "/cat/notes.txt") << "not a picture, not listed";

  nn::ImageFolderOptions options;
  options.channels = 3;
  nn::ImageFolder set(root, options);
  REQUIRE(set.classes() == std::vector<std::string>{"cat", "dog"});
  REQUIRE(set.size() == 4);
  REQUIRE(set.samples()[0].second == 0);
  REQUIRE(set.samples()[1].first == root + "/dog/b.png");
  REQUIRE(set.samples()[2].first == root + "/dog/c.png");
  REQUIRE(set.samples()[3].first == root + "/dog/more/a.PNG");
  REQUIRE(set.inputSizes() == std::vector<int64_t>{3, 4, 6});
  std::vector<float> input(3 * 4 * 6);
  float target = -1;
  set.get(1, input.data(), &target);
  REQUIRE(target == 1.f);
  REQUIRE(input == nn::imageTensor(nn::readImage(root + "/dog/b.png")).toVector());
  // The grey picture, repeated into three channels.
  set.get(3, input.data(), &target);
  REQUIRE(input[0] == input[24]);

  // Resized and cropped: every sample 5 x 5 of a 8 x 10 resize, grey.
  options.channels = 1;
  options.height = 8;
  options.width = 10;
  options.cropHeight = options.cropWidth = 5;
  nn::ImageFolder small(root, options);
  REQUIRE(small.inputSizes() == std::vector<int64_t>{1, 5, 5});
  const Tensor expected = nn::centerCrop(
      nn::resizeBilinear(nn::imageTensor(nn::convertChannels(nn::readImage(root + "/dog/b.png"), 1)), 8, 10), 5, 5);
  REQUIRE(small.image(1).toVector() == expected.toVector());

  // Channels that differ without a conversion are refused, naming the file.
  REQUIRE_THROWS_WITH(nn::ImageFolder(root), Catch::Contains("a.PNG") && Catch::Contains("channels"));
}

TEST_CASE("ImageFolder refuses or skips files it cannot read", "[ImageFolder]") {
  nn::test::TempDir dir;
  const std::string root = dir.file("pictures");
  std::filesystem::create_directories(root + "/a");
  std::filesystem::create_directories(root + "/b");
  nn::test::writePng(root + "/a/1.png", 4, 4, 1, pattern(4, 4, 1, 1));
  nn::test::writePng(root + "/b/1.png", 4, 4, 1, pattern(4, 4, 1, 2));
  std::ofstream(root + "/b/2.png") << "not a picture";
  const std::string good = bytesOf(root + "/a/1.png");
  std::ofstream(root + "/b/3.png", std::ios::binary) << good.substr(0, good.size() - 20);
  std::ofstream(root + "/b/4.png", std::ios::binary) << pngHeader(50000, 50000);
  REQUIRE_THROWS_WITH(nn::ImageFolder(root), Catch::Contains(root + "/b/2.png") && Catch::Contains("not a PNG"));
  nn::ImageFolderOptions options;
  options.skipUnreadable = true;
  nn::ImageFolder set(root, options);
  REQUIRE(set.size() == 2);
  REQUIRE(set.skipped() == 3);
  // Pictures of different sizes need a resize.
  nn::test::writePng(root + "/a/2.png", 5, 4, 1, pattern(5, 4, 1, 3));
  REQUIRE_THROWS_WITH(nn::ImageFolder(root, options), Catch::Contains("2.png") && Catch::Contains("4 x 5"));
  REQUIRE_THROWS_WITH(nn::ImageFolder(dir.file("none")), Catch::Contains("not a folder"));
}

TEST_CASE("ImageFolder: links that loop or break, unreadable roots, links to folders followed once or not at all",
          "[ImageFolder]") {
  namespace fs = std::filesystem;
  nn::test::TempDir dir;
  const std::string root = dir.file("pictures"), outside = dir.file("outside");
  fs::create_directories(root + "/a");
  fs::create_directories(root + "/b");
  fs::create_directories(outside);
  nn::test::writePng(root + "/a/1.png", 4, 4, 1, pattern(4, 4, 1, 1));
  nn::test::writePng(root + "/b/1.png", 4, 4, 1, pattern(4, 4, 1, 2));
  nn::test::writePng(outside + "/far.png", 4, 4, 1, pattern(4, 4, 1, 3));
  fs::create_directory_symlink("..", root + "/a/up");            // a loop through the folders above
  fs::create_directory_symlink(outside, root + "/b/elsewhere");  // pictures from outside the root
  CHECK(nn::ImageFolder(root).size() == 3);
  nn::ImageFolderOptions noLinks;
  noLinks.followSymlinks = false;
  const nn::ImageFolder own(root, noLinks);
  REQUIRE(own.size() == 2);
  CHECK(own.samples()[1].first == root + "/b/1.png");

  // A file linked to itself, and a link to nothing, are named, or skipped and counted.
  fs::create_symlink("self.png", root + "/b/self.png");
  fs::create_symlink(dir.file("nothing.png"), root + "/b/gone.png");
  REQUIRE_THROWS_WITH(nn::ImageFolder(root), Catch::Contains("/b/") && Catch::Contains("skipUnreadable"));
  nn::ImageFolderOptions skip;
  skip.skipUnreadable = true;
  const nn::ImageFolder skipped(root, skip);
  CHECK(skipped.size() == 3);
  CHECK(skipped.skipped() == 2);

  // A root that is a link to itself is an nn::Error, not a std::filesystem error.
  fs::create_directory_symlink(dir.file("loop"), dir.file("loop"));
  REQUIRE_THROWS_AS(nn::ImageFolder(dir.file("loop")), nn::Error);
  REQUIRE_THROWS_WITH(nn::ImageFolder(dir.file("loop")), Catch::Contains("is not a folder"));
}

TEST_CASE("resnet --data trains on a folder of generated PNG and JPEG pictures and learns them", "[ImageFolder]") {
  nn::test::TempDir dir;
  // Two classes: a bright band across the top, or down the left; noise everywhere.
  uint32_t state = 12345;
  auto noise = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 27);  // 0 to 31
  };
  for (const std::string split : {"train", "test"})
    for (int label = 0; label < 2; ++label) {
      const std::string folder = dir.file(split + "/" + (label == 0 ? "top" : "left"));
      std::filesystem::create_directories(folder);
      for (int n = 0; n < (split == "train" ? 48 : 16); ++n) {
        const int size = 24 + n % 9;  // sizes differ: the set resizes them
        std::vector<uint8_t> samples;
        for (int y = 0; y < size; ++y)
          for (int x = 0; x < size; ++x) {
            const bool band = label == 0 ? y < size / 3 : x < size / 3;
            for (int c = 0; c < 3; ++c) samples.push_back(static_cast<uint8_t>((band ? 200 : 30) + noise()));
          }
        const std::string file = folder + "/" + std::to_string(n);
        if (n % 2 == 0)
          nn::test::writePng(file + ".png", size, size, 3, samples);
        else
          nn::test::writeJpeg(file + ".jpg", size, size, 3, samples);
      }
    }
  const nn::test::ExampleResult run =
      nn::test::runExample("resnet", {"--data", dir.path(), "--epochs", "3", "--batch-size", "16"});
  INFO(run.stdoutText << run.stderrText);
  REQUIRE(run.exitStatus == 0);
  REQUIRE(run.stdoutText.find("2 classes (left, top), 96 training and 32 test pictures") != std::string::npos);
  const size_t at = run.stdoutText.rfind("test accuracy ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::stod(run.stdoutText.substr(at + 14, 6)) >= 0.9);
}

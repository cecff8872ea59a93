// nn::IdxFile and nn::FashionMnist: small IDX files written here, plain and gzip-compressed,
// load with their exact values; broken ones give errors naming the file.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nn/data/FashionMnist.h"
#include "nn/data/IdxFile.h"
#include "nn/tensor/Error.h"
#include "tests/support/Skip.h"
#include "tests/support/TempDir.h"

using nn::test::TempDir;

namespace {

using Bytes = std::vector<uint8_t>;

// A fresh folder, removed with everything in it at the end of the test.

// Magic 0x00 0x00 type rank, big-endian sizes, then the data.
Bytes idx(const std::vector<uint32_t>& sizes, const Bytes& data, uint8_t type = 0x08) {
  Bytes out{0, 0, type, static_cast<uint8_t>(sizes.size())};
  for (uint32_t s : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(s >> shift));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// `level` 0 stores the data uncompressed in the stream: a flipped data byte then leaves a
// well-formed stream whose data is wrong, which only the trailer's CRC shows.
Bytes gzip(const Bytes& bytes, int level = Z_BEST_COMPRESSION) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size())) + 32;
  Bytes out(size);
  z_stream s{};
  // windowBits 15 + 16: a gzip wrapper, as gzip(1) writes.
  REQUIRE(deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  s.next_in = const_cast<Bytes::value_type*>(bytes.data());
  s.avail_in = static_cast<uInt>(bytes.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

void writeFile(const std::string& path, const Bytes& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!bytes.empty()) REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
}

Bytes prefix(const Bytes& bytes, size_t n) { return Bytes(bytes.begin(), bytes.begin() + static_cast<long>(n)); }

Bytes counting(size_t n) {
  Bytes out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(i * 7 % 256);
  return out;
}

}  // namespace

TEST_CASE("IdxFile reads plain and gzip-compressed files with exact values", "[IdxFile]") {
  TempDir dir;
  const Bytes data = counting(2 * 3 * 5);
  const Bytes file = idx({2, 3, 5}, data);
  writeFile(dir.file("a.idx"), file);
  writeFile(dir.file("a.idx.gz"), gzip(file));
  for (const std::string name : {"a.idx", "a.idx.gz"}) {
    const nn::IdxFile read = nn::IdxFile::read(dir.file(name));
    REQUIRE(read.sizes == std::vector<int64_t>{2, 3, 5});
    REQUIRE(read.data == data);
  }
  // Sizes above 2^24 per byte position decode big-endian: 0x00010203 = 66051.
  writeFile(dir.file("b.idx"), idx({1, 66051}, counting(66051)));
  const nn::IdxFile wide = nn::IdxFile::read(dir.file("b.idx"));
  REQUIRE(wide.sizes == std::vector<int64_t>{1, 66051});
  REQUIRE(wide.data[66050] == static_cast<uint8_t>(66050 * 7 % 256));
}

TEST_CASE("IdxFile names the file and the problem for missing and malformed files", "[IdxFile]") {
  TempDir dir;
  const std::string path = dir.file("bad.idx");
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("cannot open"));

  Bytes file = idx({4}, counting(4));
  file[0] = 0x1f;
  file[1] = 0x00;
  writeFile(path, file);
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("not an IDX file"));

  writeFile(path, idx({4}, Bytes(16), 0x0D));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("0x0d"));

  writeFile(path, idx({}, {}));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("rank from 1 to 4, got 0"));
  writeFile(path, idx({1, 1, 1, 1, 1}, {7}));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("got 5"));

  // 2^16 x 2^16 x 2^16 bytes would overflow a 32-bit count and exhaust memory: refused first.
  writeFile(path, idx({65536, 65536, 65536}, {}));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("declare more than"));
}

TEST_CASE("IdxFile rejects files truncated anywhere and files with trailing bytes", "[IdxFile]") {
  TempDir dir;
  const std::string path = dir.file("cut.idx");
  const Bytes file = idx({6, 4}, counting(24));  // 4 magic + 8 sizes + 24 data bytes
  for (size_t cut : {size_t{0}, size_t{3}, size_t{4}, size_t{6}, size_t{11}, size_t{12}, size_t{20}, size_t{35}}) {
    INFO("cut at byte " << cut);
    writeFile(path, prefix(file, cut));
    REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("truncated"));
  }
  writeFile(path, prefix(file, 22));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path, "image data"),
                      Catch::Contains(path + ": truncated: expected 24 bytes of image data, got 10"));

  Bytes longer = file;
  longer.push_back(0);
  longer.push_back(1);
  writeFile(path, longer);
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path) && Catch::Contains("2 trailing bytes"));
  writeFile(path + ".gz", gzip(longer));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path + ".gz"), Catch::Contains(path) && Catch::Contains("2 trailing bytes"));

  // A compressed file cut anywhere, the gzip header and the CRC trailer included.
  const Bytes compressed = gzip(file);
  for (size_t cut = 1; cut < compressed.size(); ++cut) {
    INFO("gzip cut at byte " << cut << " of " << compressed.size());
    writeFile(path + ".gz", prefix(compressed, cut));
    REQUIRE_THROWS_WITH(nn::IdxFile::read(path + ".gz"), Catch::Contains(path + ".gz: "));
  }
  Bytes corrupt = compressed;
  corrupt[corrupt.size() - 6] ^= 0xff;  // inside the CRC-32 of the trailer
  writeFile(path + ".gz", corrupt);
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path + ".gz"), Catch::Contains(path + ".gz: "));
}

TEST_CASE("IdxFile refuses a gzip file whose data changed, with its trailer or without it", "[IdxFile]") {
  // 200 KB stored uncompressed in the stream, one bit of the data flipped: the stream stays
  // well formed, so only the CRC-32 of the trailer shows the damage, and a file whose last 8
  // bytes (the trailer) are gone must not load as if it had ended.
  TempDir dir;
  const std::string path = dir.file("flipped.idx.gz");
  const Bytes stored = gzip(idx({200, 1024}, counting(200 * 1024)), 0);
  Bytes flipped = stored;
  flipped[stored.size() / 2] ^= 0x10;
  writeFile(path, flipped);
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains(path + ": corrupt gzip stream: incorrect data check"));
  writeFile(path, prefix(flipped, flipped.size() - 8));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path),
                      Catch::Contains(path + ": truncated: the gzip stream ends before its end"));
  writeFile(path, prefix(stored, stored.size() - 8));
  REQUIRE_THROWS_WITH(nn::IdxFile::read(path), Catch::Contains("its trailer, with the CRC, is missing"));
  writeFile(path, stored);
  REQUIRE(nn::IdxFile::read(path).data == counting(200 * 1024));
}

namespace {

// The split `prefixName` ("train", "t10k") in dir, compressed or not: three images of
// height x 28 whose flat pixel index k holds k % 256, and the given labels.
void writeSmallSplit(const TempDir& dir, const std::string& prefixName, bool compressed, const Bytes& labels,
                     uint32_t height = 28) {
  Bytes pixels(3 * height * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i % 256);
  const Bytes imageFile = idx({3, height, 28}, pixels);
  const Bytes labelFile = idx({static_cast<uint32_t>(labels.size())}, labels);
  const std::string suffix = compressed ? ".gz" : "";
  writeFile(dir.file(prefixName + "-images-idx3-ubyte" + suffix), compressed ? gzip(imageFile) : imageFile);
  writeFile(dir.file(prefixName + "-labels-idx1-ubyte" + suffix), compressed ? gzip(labelFile) : labelFile);
}

}  // namespace

TEST_CASE("FashionMnist loads a split as [N, 1, 28, 28] pixels in [0, 1] and [N] labels", "[FashionMnist]") {
  TempDir dir;
  writeSmallSplit(dir, "train", true, {0, 9, 4});
  writeSmallSplit(dir, "t10k", false, {3, 3, 1});
  const nn::FashionMnist train(nn::FashionMnist::Split::Train, dir.path());
  REQUIRE(train.images.sizes() == std::vector<int64_t>{3, 1, 28, 28});
  REQUIRE(train.labels.toVector() == std::vector<float>{0, 9, 4});
  REQUIRE(train.size() == 3);
  // Flat pixel index k holds k % 256, divided by 255: k = 0 -> 0, k = 51 -> 0.2,
  // k = 255 -> 1, k = 256 (image 0, row 9, column 4) -> 0, k = 784 + 28 + 3 = 815 -> 47/255.
  REQUIRE(train.images.at({0, 0, 0, 0}) == 0.0f);
  REQUIRE(train.images.at({0, 0, 1, 23}) == 0.2f);
  REQUIRE(train.images.at({0, 0, 9, 3}) == 1.0f);
  REQUIRE(train.images.at({0, 0, 9, 4}) == 0.0f);
  REQUIRE(train.images.at({1, 0, 1, 3}) == 47.0f / 255.0f);

  const nn::FashionMnist test(nn::FashionMnist::Split::Test, dir.path());
  REQUIRE(test.labels.toVector() == std::vector<float>{3, 3, 1});
  REQUIRE(test.images.sizes() == std::vector<int64_t>{3, 1, 28, 28});
  REQUIRE(std::string(nn::FashionMnist::className(9)) == "Ankle boot");
}

TEST_CASE("FashionMnist rejects bad labels, count mismatches and wrong image sizes, naming the file",
          "[FashionMnist]") {
  using Split = nn::FashionMnist::Split;
  {
    TempDir dir;
    REQUIRE_THROWS_WITH(nn::FashionMnist(Split::Train, dir.path()),
                        Catch::Contains(dir.file("train-images-idx3-ubyte")) && Catch::Contains("cannot open"));
  }
  {
    TempDir dir;
    writeSmallSplit(dir, "train", true, {0, 10, 4});
    REQUIRE_THROWS_WITH(nn::FashionMnist(Split::Train, dir.path()),
                        Catch::Contains(dir.file("train-labels-idx1-ubyte.gz")) && Catch::Contains("label 10") &&
                            Catch::Contains("sample 1"));
  }
  {
    TempDir dir;
    writeSmallSplit(dir, "train", false, {0, 1});
    REQUIRE_THROWS_WITH(nn::FashionMnist(Split::Train, dir.path()),
                        Catch::Contains(dir.file("train-labels-idx1-ubyte")) && Catch::Contains("expected 3 labels") &&
                            Catch::Contains("got 2"));
  }
  {
    TempDir dir;
    writeSmallSplit(dir, "t10k", true, {0, 1, 2}, 27);
    REQUIRE_THROWS_WITH(nn::FashionMnist(Split::Test, dir.path()),
                        Catch::Contains(dir.file("t10k-images-idx3-ubyte.gz")) && Catch::Contains("[3, 27, 28]"));
  }
}

TEST_CASE("IdxFile::readSizes reads the header alone, checked as read checks it", "[IdxFile]") {
  TempDir dir;
  // 2.7 million 28x28 images declared, 100 bytes of them present: the sizes, without the data.
  const Bytes header = idx({2700000, 28, 28}, counting(100));
  writeFile(dir.file("big.idx.gz"), gzip(header));
  CHECK(nn::IdxFile::readSizes(dir.file("big.idx.gz")) == std::vector<int64_t>{2700000, 28, 28});
  CHECK_THROWS_WITH(nn::IdxFile::read(dir.file("big.idx.gz")), Catch::Contains("truncated"));
  writeFile(dir.file("bad.idx"), idx({0x10000, 0x10000}, {}));
  CHECK_THROWS_WITH(nn::IdxFile::readSizes(dir.file("bad.idx")), Catch::Contains("declare more than"));
}

TEST_CASE("FashionMnist compares the two files' headers before it inflates either body", "[FashionMnist]") {
  using Split = nn::FashionMnist::Split;
  // Neither body is read: a body that is cut short (the images' 100 bytes of 2.1 GB declared)
  // or not a gzip stream at all (the labels') would be the error if it were.
  const Bytes shortImages = gzip(idx({2700000, 28, 28}, counting(100)));
  Bytes brokenLabels = gzip(idx({3}, {0, 1, 2}));
  brokenLabels.resize(brokenLabels.size() - 6);
  {
    TempDir dir;
    writeFile(dir.file("train-images-idx3-ubyte.gz"), shortImages);
    writeFile(dir.file("train-labels-idx1-ubyte.gz"), brokenLabels);
    CHECK_THROWS_WITH(nn::FashionMnist(Split::Train, dir.path()),
                      Catch::Contains(dir.file("train-labels-idx1-ubyte.gz")) &&
                          Catch::Contains("expected 2700000 labels, one per image of") && Catch::Contains("got 3"));
  }
  {
    TempDir dir;
    writeFile(dir.file("train-images-idx3-ubyte.gz"), gzip(idx({3, 27, 28}, counting(10))));
    writeFile(dir.file("train-labels-idx1-ubyte.gz"), brokenLabels);
    CHECK_THROWS_WITH(nn::FashionMnist(Split::Train, dir.path()), Catch::Contains("[3, 27, 28]"));
  }
}

TEST_CASE("FashionMnist test split from the installed data set", "[FashionMnist]") {
  if (!std::filesystem::exists(nn::FashionMnist::kDefaultFolder))
    NN_SKIP("no data set in " << nn::FashionMnist::kDefaultFolder << ": install dataset-fashion-mnist to run this");
  const nn::FashionMnist test(nn::FashionMnist::Split::Test);
  REQUIRE(test.images.sizes() == std::vector<int64_t>{10000, 1, 28, 28});
  // The published test set holds exactly 1000 pictures of each class.
  std::map<float, int> perClass;
  for (float label : test.labels.toVector()) ++perClass[label];
  REQUIRE(perClass.size() == 10);
  for (const auto& [label, count] : perClass) REQUIRE(count == 1000);
  const std::vector<float> pixels = test.images.toVector();
  REQUIRE(*std::min_element(pixels.begin(), pixels.end()) == 0.0f);
  REQUIRE(*std::max_element(pixels.begin(), pixels.end()) == 1.0f);
}

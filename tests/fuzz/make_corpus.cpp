// Writes the seed corpora of the fuzz targets:
//   bazel run //tests/fuzz:make_corpus -- "$PWD/tests/fuzz/corpus"
// For the readers, a few valid and a few broken files each: names say what each file should do,
// "valid-*" files are accepted by at least one reader, "broken-*" files by none
// (tests/io/fuzz_test.cpp checks both). For module trees, one per module type, named for it; for
// tensor views, a few sequences of every operation.
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tests/fuzz/ModuleTrees.h"
#include "tests/fuzz/Readers.h"
#include "tests/fuzz/TensorViews.h"

namespace {

using Bytes = std::string;

void writeFile(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

Bytes readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Magic 0x00 0x00 type rank, big-endian sizes, then product(sizes) bytes counting up.
Bytes idx(const std::vector<uint32_t>& sizes, uint8_t type = 0x08) {
  Bytes out{0, 0, static_cast<char>(type), static_cast<char>(sizes.size())};
  uint64_t total = 1;
  for (uint32_t s : sizes) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(s >> shift));
    total *= s;
  }
  for (uint64_t i = 0; i < total; ++i) out.push_back(static_cast<char>(i * 7));
  return out;
}

Bytes gzip(const Bytes& bytes) {
  z_stream s{};
  // windowBits 15 + 16: a gzip wrapper, as gzip(1) writes.
  deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&s, static_cast<uLong>(bytes.size())), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  s.avail_in = static_cast<uInt>(bytes.size());
  s.next_out = reinterpret_cast<Bytef*>(&out[0]);
  s.avail_out = static_cast<uInt>(out.size());
  if (deflate(&s, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

void writeIdxCorpus(const std::string& dir) {
  const Bytes images = idx({2, 3, 4});
  writeFile(dir + "/valid-rank1.idx", idx({5}));
  writeFile(dir + "/valid-rank3.idx", images);
  writeFile(dir + "/valid-rank3.idx.gz", gzip(images));
  writeFile(dir + "/valid-rank4-empty.idx", idx({2, 0, 3, 1}));
  writeFile(dir + "/broken-truncated.idx", images.substr(0, images.size() - 5));
  writeFile(dir + "/broken-trailing.idx", images + "xyz");
  writeFile(dir + "/broken-float-type.idx", idx({2, 2}, 0x0d));
  writeFile(dir + "/broken-rank5.idx", idx({1, 1, 1, 1, 1}));
  const Bytes zipped = gzip(images);
  // Cut inside the 8-byte trailer (CRC and length): every data byte is there.
  writeFile(dir + "/broken-truncated-trailer.idx.gz", zipped.substr(0, zipped.size() - 3));
}

// One module of every registered type, small, in a tree with containers two deep.
nn::ModulePtr everyModule() {
  auto branchA = std::make_shared<nn::Sequential>();
  branchA->add(std::make_shared<nn::Linear>(18, 2));
  branchA->add(std::make_shared<nn::Tanh>());
  auto branchB = std::make_shared<nn::Sequential>();
  branchB->add(std::make_shared<nn::Linear>(18, 3, /*withBias=*/false));
  branchB->add(std::make_shared<nn::SoftMax>());
  auto concat = std::make_shared<nn::Concat>(1);
  concat->add(branchA);
  concat->add(branchB);

  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 2, 3, 3, 1, 1, 1, 1));
  net->add(std::make_shared<nn::SpatialBatchNormalization>(2));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::SpatialAveragePooling>(3, 3, 1, 1, 1, 1));
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 18}));
  net->add(concat);
  net->add(std::make_shared<nn::BatchNormalization>(5));
  net->add(std::make_shared<nn::Dropout>(0.25f));
  net->add(std::make_shared<nn::Sigmoid>());
  net->add(std::make_shared<nn::Reshape>(std::vector<int64_t>{5}, /*batchMode=*/true));
  net->add(std::make_shared<nn::Identity>());
  net->add(std::make_shared<nn::Linear>(5, 3));
  net->add(std::make_shared<nn::LogSoftMax>());
  net->evaluate();
  return net;
}

void writeCheckpointCorpus(const std::string& dir) {
  nn::manualSeed(1);
  nn::save(*everyModule(), dir + "/valid-every-module.safetensors");

  // A checkpoint in the middle of an epoch, after one step with momentum.
  nn::fuzz::CheckpointSetup setup;
  nn::ClassNLLCriterion criterion;
  setup.batches.next();
  auto& model = *setup.model;
  model.zeroGradParameters();
  const nn::Tensor& out = model.forward(setup.batches.input);
  criterion.forward(out, setup.batches.target);
  model.backward(setup.batches.input, criterion.backward(out, setup.batches.target));
  setup.sgd.step();
  setup.state.epochsDone = 3;
  const std::string checkpoint = dir + "/valid-checkpoint.safetensors";
  nn::saveCheckpoint(setup.state, checkpoint);

  // The model's tensors alone, as another tool would write them: no metadata at all.
  nn::writeSafetensors(dir + "/valid-tensors-only.safetensors", setup.model->stateDict(), {});
  nn::writeSafetensors(dir + "/valid-empty.safetensors", {}, {});

  const Bytes whole = readFile(checkpoint);
  writeFile(dir + "/broken-truncated.safetensors", whole.substr(0, whole.size() / 2));
  // The header length and the header as written, with the JSON cut short and padded back.
  Bytes badJson = readFile(dir + "/valid-empty.safetensors");
  badJson.replace(8, 2, "{ ");
  writeFile(dir + "/broken-json.safetensors", badJson);
  // Two tensors whose data overlap.
  const Bytes header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  Bytes overlap(8, '\0');
  for (int i = 0; i < 8; ++i) overlap[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  writeFile(dir + "/broken-overlap.safetensors", overlap + header + Bytes(12, '\0'));
}

void writeModuleTreeCorpus(const std::string& dir) {
  const std::vector<nn::fuzz::Prototype>& all = nn::fuzz::prototypes();
  for (size_t i = 0; i < all.size(); ++i)
    writeFile(dir + "/" + all[i].module->typeName() + ".bin", nn::fuzz::moduleTreeSeed(i));
}

void writeTensorViewCorpus(const std::string& dir) {
  const std::vector<std::string> seeds = nn::fuzz::tensorViewSeeds();
  for (size_t i = 0; i < seeds.size(); ++i) writeFile(dir + "/sequence-" + std::to_string(i) + ".bin", seeds[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr
        << "usage: make_corpus CORPUS_DIR (with folders idx/, checkpoint/, module_tree/ and tensor_view/ in it)\n";
    return 2;
  }
  const std::string root = argv[1];
  writeIdxCorpus(root + "/idx");
  writeCheckpointCorpus(root + "/checkpoint");
  writeModuleTreeCorpus(root + "/module_tree");
  writeTensorViewCorpus(root + "/tensor_view");
  return 0;
}

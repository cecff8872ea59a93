// The reader calls of the fuzz targets: the bytes go to the readers through an in-memory
// file (memfd), so that a run writes nothing to disk and leaves nothing behind when it dies.
#include "tests/fuzz/Readers.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/data/IdxFile.h"
#include "nn/data/Image.h"
#include "nn/io/Serialize.h"
#include "nn/io/Torch7.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/tensor/Error.h"

namespace nn::fuzz {

namespace {

// An anonymous in-memory file holding the given bytes, opened by path as any other file
// (/proc/self/fd/N opens a new description of it, at offset 0).
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("nn-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fd_);
        throw std::runtime_error(std::string("writing the input to memory: ") + std::strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// 1 if `read` returns, 0 if it throws nn::Error; other exceptions pass.
template <typename Read>
int accepts(Read read) {
  try {
    read();
    return 1;
  } catch (const Error&) {
    return 0;
  }
}

std::vector<uint8_t> gzip(const uint8_t* data, size_t size) {
  z_stream s{};
  // windowBits 15 + 16: a gzip wrapper, as gzip(1) writes.
  if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&s, static_cast<uLong>(size)));
  s.next_in = const_cast<uint8_t*>(data);
  s.avail_in = static_cast<uInt>(size);
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

// The file's contents, or none where the reader rejects it.
struct IdxOutcome {
  bool accepted = false;
  IdxFile file;
};

IdxOutcome readIdxFile(const uint8_t* data, size_t size) {
  const MemoryFile file(data, size);
  IdxOutcome out;
  out.accepted = accepts([&] { out.file = IdxFile::read(file.path()); });
  return out;
}

std::shared_ptr<Sequential> checkpointModel() {
  auto model = std::make_shared<Sequential>();
  model->add(std::make_shared<Linear>(4, 3));
  model->add(std::make_shared<ReLU>());
  model->add(std::make_shared<Linear>(3, 2));
  return model;
}

SgdOptions withMomentum() {
  SgdOptions options;
  options.learningRate = 0.1f;
  options.momentum = 0.9f;
  return options;
}

}  // namespace

int readIdx(const uint8_t* data, size_t size) {
  const IdxOutcome plain = readIdxFile(data, size);
  // zlib reads a file that starts with the gzip magic number as gzip: compressing it again
  // would give different contents, not the same ones compressed.
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) return plain.accepted;
  const std::vector<uint8_t> compressed = gzip(data, size);
  const IdxOutcome unzipped = readIdxFile(compressed.data(), compressed.size());
  if (plain.accepted != unzipped.accepted || plain.file.sizes != unzipped.file.sizes ||
      plain.file.data != unzipped.file.data)
    throw std::logic_error(std::string("IdxFile::read: the plain file was ") +
                           (plain.accepted ? "accepted" : "rejected") + ", its gzip compression " +
                           (unzipped.accepted ? "accepted" : "rejected") +
                           (plain.accepted && unzipped.accepted ? " with other contents" : ""));
  return plain.accepted + unzipped.accepted;
}

int readImage(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  constexpr int64_t kPixels = int64_t{1} << 20;
  Image header, image;
  const int accepted = accepts([&] { header = decodeImageHeader(bytes, "fuzz input", kPixels); }) +
                       accepts([&] { image = decodeImage(bytes, "fuzz input", kPixels); });
  if (accepted == 2) {
    if (header.height != image.height || header.width != image.width || header.channels != image.channels ||
        static_cast<int64_t>(image.pixels.size()) != image.height * image.width * image.channels)
      throw std::logic_error("decodeImage: the header and the picture disagree");
    imageTensor(convertChannels(image, 1));
    imageTensor(convertChannels(image, 3));
  }
  return accepted;
}

int readCheckpoint(const uint8_t* data, size_t size) {
  const MemoryFile file(data, size);
  int accepted = accepts([&] { readSafetensors(file.path()); });
  accepted += accepts([&] { load(file.path()); });
  CheckpointSetup setup;
  accepted += accepts([&] { loadStateInto(*setup.model, file.path()); });
  accepted += accepts([&] { loadCheckpoint(setup.state, file.path()); });
  return accepted;
}

int readTorch7(const uint8_t* data, size_t size) {
  const MemoryFile file(data, size);
  return accepts([&] { nn::readTorch7(file.path()); }) + accepts([&] { loadTorch7(file.path()); });
}

CheckpointSetup::CheckpointSetup()
    : model(checkpointModel()),
      sgd(model->getParameters(), withMomentum()),
      batches(Tensor::zeros({6, 4}), Tensor::zeros({6}), 4) {
  state.model = model.get();
  state.optimizer = &sgd;
  state.batches = &batches;
}

}  // namespace nn::fuzz

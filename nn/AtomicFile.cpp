// nn::AtomicFile: temporary file, fsync, rename, fsync of the folder.
#include "nn/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nn/Error.h"

namespace nn {

namespace {
std::string errnoText() { return std::strerror(errno); }
}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  NN_CHECK(!path.empty() && path.back() != '/', "nn::AtomicFile: expected a file path, got '" << path << "'");
  const size_t slash = path.rfind('/');
  folder_ = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string pattern = folder_ + "/." + name + ".tmp.XXXXXX";
  fd_ = mkstemp(&pattern[0]);
  NN_CHECK(fd_ >= 0, path << ": cannot create a temporary file in " << folder_ << ": " << errnoText());
  tempPath_ = pattern;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(tempPath_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    NN_CHECK(n > 0, path_ << ": cannot write: " << errnoText());
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  // mkstemp makes the file private (0600); a saved model is an ordinary readable file.
  NN_CHECK(fchmod(fd_, 0644) == 0, path_ << ": cannot set permissions: " << errnoText());
  NN_CHECK(fsync(fd_) == 0, path_ << ": cannot write (fsync): " << errnoText());
  const int closed = close(fd_);
  fd_ = -1;
  NN_CHECK(closed == 0, path_ << ": cannot write (close): " << errnoText());
  NN_CHECK(rename(tempPath_.c_str(), path_.c_str()) == 0, path_ << ": cannot replace: " << errnoText());
  committed_ = true;
  const int folder = open(folder_.c_str(), O_RDONLY | O_DIRECTORY);
  NN_CHECK(folder >= 0, path_ << ": written, but cannot open " << folder_ << " to sync it: " << errnoText());
  const int synced = fsync(folder);
  close(folder);
  NN_CHECK(synced == 0, path_ << ": written, but cannot sync " << folder_ << ": " << errnoText());
}

void writeFileAtomically(const std::string& path, const std::string& contents) {
  AtomicFile file(path);
  file.write(contents.data(), contents.size());
  file.commit();
}

}  // namespace nn

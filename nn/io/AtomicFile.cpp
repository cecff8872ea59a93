// nn::AtomicFile: the target through symbolic links, a temporary file beside it, fsync,
// rename, fsync of the folder.
#include "nn/io/AtomicFile.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

std::string errnoText() { return std::strerror(errno); }

std::string folderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The path that `path` names once every symbolic link on its last component is followed
// (links in the folders above are the kernel's to follow): the file a save replaces.
std::string targetOf(const std::string& path) {
  std::string target = path;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    NN_CHECK(hops < 40, path << ": too many levels of symbolic links");
    char link[PATH_MAX];
    const ssize_t n = readlink(target.c_str(), link, sizeof(link) - 1);
    NN_CHECK(n >= 0, path << ": cannot read the symbolic link " << target << ": " << errnoText());
    link[n] = '\0';
    target = link[0] == '/' ? std::string(link) : folderOf(target) + "/" + link;
  }
}

// Throws unless the target is absent or a regular file.
void checkTarget(const std::string& path, const std::string& target) {
  struct stat st;
  if (stat(target.c_str(), &st) != 0) {
    NN_CHECK(errno == ENOENT, path << ": cannot save there: " << errnoText());
    return;
  }
  NN_CHECK(S_ISREG(st.st_mode),
           path << ": cannot save there: " << (target == path ? "it is " : "it links to " + target + ", which is ")
                << kindOf(st.st_mode) << ", not a regular file");
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  NN_CHECK(!path.empty() && path.back() != '/', "nn::AtomicFile: expected a file path, got '" << path << "'");
  target_ = targetOf(path);
  checkTarget(path, target_);
  folder_ = folderOf(target_);
  const size_t slash = target_.rfind('/');
  const std::string name = slash == std::string::npos ? target_ : target_.substr(slash + 1);
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
  // Checked again: the target may have become something else while the data was written.
  checkTarget(path_, target_);
  NN_CHECK(rename(tempPath_.c_str(), target_.c_str()) == 0, path_ << ": cannot replace: " << errnoText());
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

void checkWritable(const std::string& path) {
  NN_CHECK(!path.empty() && path.back() != '/', path << ": cannot save there: expected a file path");
  const std::string target = targetOf(path);
  checkTarget(path, target);
  const std::string folder = folderOf(target);
  struct stat st;
  NN_CHECK(stat(folder.c_str(), &st) == 0, path << ": cannot save there: the folder " << folder << ": " << errnoText());
  NN_CHECK(S_ISDIR(st.st_mode), path << ": cannot save there: " << folder << " is not a folder");
  NN_CHECK(access(folder.c_str(), W_OK | X_OK) == 0,
           path << ": cannot save there: the folder " << folder << " is not writable: " << errnoText());
}

void checkAppendable(const std::string& path) {
  NN_CHECK(!path.empty() && path.back() != '/', path << ": cannot write there: expected a file path");
  const std::string target = targetOf(path);
  struct stat st;
  if (stat(target.c_str(), &st) == 0) {
    NN_CHECK(!S_ISDIR(st.st_mode), path << ": cannot write there: it is a folder");
    return;
  }
  const std::string folder = folderOf(target);
  NN_CHECK(stat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode), path << ": cannot write there: no folder " << folder);
  NN_CHECK(access(folder.c_str(), W_OK | X_OK) == 0,
           path << ": cannot write there: the folder " << folder << " is not writable: " << errnoText());
}

void appendToFile(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  NN_CHECK(fd >= 0, path << ": cannot open to append: " << errnoText());
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = errnoText();
      close(fd);
      throw Error(path + ": cannot append: " + why);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  NN_CHECK(close(fd) == 0, path << ": cannot append (close): " << errnoText());
}

}  // namespace nn

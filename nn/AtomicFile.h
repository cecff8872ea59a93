// nn::AtomicFile: a file that is written whole or not at all. The data goes to a temporary
// file in the same folder, which commit() syncs and renames over the target; if commit()
// is not reached, the temporary file is removed and the target keeps its old contents.
#pragma once

#include <cstddef>
#include <string>

namespace nn {

class AtomicFile {
 public:
  /// Creates the temporary file next to `path`; throws nn::Error naming path if it cannot.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  /// Makes the data durable, puts it in place of `path` (mode 0644), then makes the rename durable.
  void commit();

 private:
  std::string path_;
  std::string folder_;
  std::string tempPath_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Replaces the file at `path` with `contents`, atomically (AtomicFile).
void writeFileAtomically(const std::string& path, const std::string& contents);

}  // namespace nn

// nn::AtomicFile: a file that is written whole or not at all. The data goes to a temporary
// file in the target's folder, which commit() syncs and renames over the target; if commit()
// is not reached (an error, an exception, an interrupted save), the temporary file is removed
// and the target keeps its old contents.
//
// The target is what the path names after following symbolic links: saving through a link
// replaces the file it points to, beside it, and leaves the link. A target that exists must
// be a regular file: a device, a folder, a FIFO or a socket is refused with an nn::Error before
// anything is written, so that a save never replaces one of them with a file.
#pragma once

#include <cstddef>
#include <string>

namespace nn {

/// A file written whole or not at all: write() to a temporary file, commit() to put it in place.
class AtomicFile {
 public:
  /// Creates the temporary file beside `path`'s target; throws nn::Error naming path if it
  /// cannot, or if the target exists and is not a regular file.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends `bytes` bytes at `data` to the temporary file, all of them; an nn::Error naming the path where
  /// the system refuses (a full disk, say).
  void write(const void* data, size_t bytes);
  /// Makes the data durable, puts it in place of the target (mode 0644), then makes the
  /// rename durable.
  void commit();

 private:
  std::string path_;
  std::string target_;
  std::string folder_;
  std::string tempPath_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Replaces the file at `path` (its target, through symbolic links) with `contents`,
/// atomically (AtomicFile).
void writeFileAtomically(const std::string& path, const std::string& contents);

/// Throws an nn::Error naming `path` unless a file could be saved there with AtomicFile: its
/// target absent or a regular file, in a folder that exists and may be written. For checks
/// before long work (the example checks --save before it trains).
void checkWritable(const std::string& path);

/// Throws an nn::Error naming `path` unless appendToFile could write there: it exists (a file,
/// a FIFO, a terminal) or its folder exists and may be written.
void checkAppendable(const std::string& path);

/// Appends `text` to the file at `path` (through symbolic links, to a FIFO or a terminal too),
/// creating it where absent, in one write. For logs such as the example's metrics, which grow
/// line by line and which a reader may be following.
void appendToFile(const std::string& path, const std::string& text);

}  // namespace nn

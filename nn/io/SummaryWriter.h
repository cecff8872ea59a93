// nn::SummaryWriter: training curves in TensorBoard's event files (PyTorch's
// torch.utils.tensorboard.SummaryWriter, for scalars): `tensorboard --logdir DIR` draws them.
// Each addScalar appends one record to the writer's file, made new in the folder as
// events.out.tfevents.<seconds>.<host>.<pid>.<n>, n counting the process's writers: an Event protobuf (wall time, step, a Summary of
// one tagged simple_value) framed as TensorBoard reads it, its length and its bytes each followed
// by a masked CRC-32C. The file starts with the event TensorBoard expects first, file_version
// "brain.Event:2". Records are written whole with one write each; a run stopped between two
// leaves every earlier one readable.
#pragma once

#include <cstdint>
#include <string>

namespace nn {

/// Writes scalars to a new TensorBoard event file (PyTorch's SummaryWriter.add_scalar).
class SummaryWriter {
 public:
  /// Creates `logdir` (and the folders above it) where missing and a new event file in it; an
  /// nn::Error naming the path where either cannot be made.
  explicit SummaryWriter(const std::string& logdir);
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  /// Appends `value` under `tag` ("train/loss") at `step`, stamped with the time now (or
  /// `wallTime`, seconds since the epoch). Stored as a float, as TensorBoard's scalars are. A
  /// tag that is not UTF-8 is an nn::Error: TensorBoard would refuse the whole file.
  void addScalar(const std::string& tag, double value, int64_t step);
  /// The same, stamped with `wallTime` (seconds since the epoch) instead of the time now.
  void addScalar(const std::string& tag, double value, int64_t step, double wallTime);

  /// The event file.
  const std::string& path() const { return path_; }

 private:
  void writeRecord(const std::string& event);

  std::string path_;
  int fd_ = -1;
};

/// CRC-32C (Castagnoli) of `size` bytes: what TensorBoard's record framing checks.
uint32_t crc32c(const void* data, size_t size);

}  // namespace nn

// nn::CollectiveDeadline (cunn/distributed/CollectiveDeadline.h).
#include "cunn/distributed/CollectiveDeadline.h"

#include <sstream>
#include <utility>

namespace nn {

CollectiveDeadline::CollectiveDeadline(int rank, int size, Hooks hooks)
    : rank_(rank), size_(size), hooks_(std::move(hooks)) {}

void CollectiveDeadline::queued(const char* name, const Tensor& tensor, int64_t token, Clock::time_point now) {
  entries_.push_back({name, tensor, token, now});
}

void CollectiveDeadline::poll(double timeoutSeconds, Clock::time_point now) {
  while (first_ < entries_.size() && hooks_.completed(entries_[first_].token)) ++first_;
  if (first_ == entries_.size()) {
    entries_.clear();
    first_ = 0;
  }
  const std::string error = hooks_.asyncError();
  if (!error.empty()) {
    std::ostringstream message;
    message << "nn.ProcessGroup: rank " << rank_ << " of " << size_ << ": NCCL reports " << error;
    if (pending() > 0) message << " while " << describe(entries_[first_]) << " was running";
    message << ". Ending the job.";
    hooks_.fail(message.str());
    return;
  }
  if (pending() == 0) return;
  const Entry& oldest = entries_[first_];
  if (now - oldest.queuedAt <= std::chrono::duration<double>(timeoutSeconds)) return;
  std::ostringstream message;
  message << "nn.ProcessGroup: " << describe(oldest) << " did not complete within " << timeoutSeconds
          << " s; another rank stopped, or called another collective. Ending the job.";
  hooks_.fail(message.str());
}

std::string CollectiveDeadline::describe(const Entry& e) const {
  std::ostringstream text;
  text << "rank " << rank_ << " of " << size_ << ": NCCL " << e.name;
  if (e.tensor.numel() > 0) text << " of " << e.tensor.shapeString();
  return text.str();
}

}  // namespace nn

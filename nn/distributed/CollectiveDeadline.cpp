// nn::CollectiveDeadline (nn/distributed/CollectiveDeadline.h).
#include "nn/distributed/CollectiveDeadline.h"

#include <cstddef>
#include <sstream>
#include <utility>

namespace nn {

CollectiveDeadline::CollectiveDeadline(int rank, int size, Hooks hooks)
    : rank_(rank), size_(size), hooks_(std::move(hooks)) {}

void CollectiveDeadline::queued(const char* name, const Tensor& tensor, int64_t token, Clock::time_point now) {
  forgetCompleted();
  entries_.push_back({name, tensor, token, now});
}

void CollectiveDeadline::forgetCompleted() {
  size_t completed = 0;
  while (completed < entries_.size() && hooks_.completed(entries_[completed].token)) ++completed;
  // The completed ones leave the front (erase keeps the capacity): a training whose collectives
  // never all complete at once between two polls keeps no more entries than are pending.
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(completed));
}

void CollectiveDeadline::poll(double timeoutSeconds, Clock::time_point now) {
  forgetCompleted();
  const std::string error = hooks_.asyncError();
  if (!error.empty()) {
    std::ostringstream message;
    message << "nn.ProcessGroup: rank " << rank_ << " of " << size_ << ": NCCL reports " << error;
    if (pending() > 0) message << " while " << describe(entries_.front()) << " was running";
    message << ". Ending the job.";
    hooks_.fail(message.str());
    return;
  }
  if (pending() == 0) return;
  const Entry& oldest = entries_.front();
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

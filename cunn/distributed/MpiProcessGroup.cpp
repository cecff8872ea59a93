// nn::ProcessGroup on MPI. Every collective is MPI's non-blocking one, completed by polling
// MPI_Test against a deadline: past it, the job is ended with MPI_Abort and a message naming
// the rank and the collective, so that a rank that died or went another way hangs no other.
// Tensors on CUDA devices go through NCCL (NcclGroup.h), bootstrapped over this group, under the
// same deadline and ending the job the same way.
#include "cunn/distributed/MpiProcessGroup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "cunn/distributed/NcclGroup.h"
#include "nn/core/Error.h"

namespace nn {

namespace {

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

// Every MPI call is checked (the group's communicator returns errors instead of aborting).
#define NN_MPI_CHECK(call)                                                                              \
  do {                                                                                                  \
    const int nnMpiCode = (call);                                                                       \
    NN_CHECK(nnMpiCode == MPI_SUCCESS,                                                                  \
             __FILE__ << ":" << __LINE__ << ": " << #call << " failed: " << mpiErrorString(nnMpiCode)); \
  } while (0)

// MPI started once for the process where the program has not started it, and finalised at exit
// where this library started it.
class MpiRuntime {
 public:
  static void ensure() { static MpiRuntime runtime; }
  ~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (started_ && !finalized) MPI_Finalize();
  }

 private:
  MpiRuntime() {
    int initialized = 0;
    NN_MPI_CHECK(MPI_Initialized(&initialized));
    if (initialized) return;
    int provided = 0;
    NN_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    started_ = true;
  }
  bool started_ = false;
};

// The most elements one MPI call takes (its counts are int).
constexpr int64_t kMaxCount = int64_t{1} << 30;

// How long a wait polls its collectives without sleeping (see wait()).
constexpr std::chrono::milliseconds kBusyPoll{2};

class MpiProcessGroup : public ProcessGroup {
 public:
  explicit MpiProcessGroup(MPI_Comm comm) {
    NN_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
    NN_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    NN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    NN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  ~MpiProcessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  [[noreturn]] void abort(const std::string& message, int status) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(comm_, status);
    std::abort();  // MPI_Abort does not return
  }

  void startAllReduceSum(Tensor& t) override {
    checkContiguous(t, "allReduceSum");
    if (!t.device().isCpu()) return nccl(t).allReduceSum(t);
    inPieces(t, [&](float* data, int count, MPI_Request* request) {
      return MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, comm_, request);
    });
    started(t, "allReduceSum");
  }

  void broadcast(Tensor& t, int root) override {
    NN_CHECK(root >= 0 && root < size_,
             "nn.ProcessGroup.broadcast: expected a root rank from 0 to " << size_ - 1 << ", got " << root);
    checkContiguous(t, "broadcast");
    if (!t.device().isCpu()) return nccl(t).broadcast(t, root);
    inPieces(t, [&](float* data, int count, MPI_Request* request) {
      return MPI_Ibcast(data, count, MPI_FLOAT, root, comm_, request);
    });
    started(t, "broadcast");
    wait();
  }

  std::vector<std::string> allGather(const std::string& text) override {
    NN_CHECK(text.size() < static_cast<size_t>(kMaxCount),
             "nn.ProcessGroup.allGather: a text of " << text.size() << " bytes is too long");
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size_));
    NN_MPI_CHECK(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, newRequest()));
    started(Tensor(), "allGather");
    wait();
    std::vector<int> offsets(lengths.size());
    int64_t total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    NN_CHECK(total < kMaxCount, "nn.ProcessGroup.allGather: " << total << " bytes in all is too much");
    std::string all(static_cast<size_t>(total), '\0');
    NN_MPI_CHECK(MPI_Iallgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                                 comm_, newRequest()));
    started(Tensor(), "allGather");
    wait();
    std::vector<std::string> texts;
    for (size_t r = 0; r < lengths.size(); ++r)
      texts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
    return texts;
  }

  void barrier() override {
    NN_MPI_CHECK(MPI_Ibarrier(comm_, newRequest()));
    started(Tensor(), "barrier");
    wait();
  }

  void progress() override {
    if (requests_.empty()) return;
    int done = 0;
    NN_MPI_CHECK(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
    if (done) clearStarted();
  }

  // Polls the started requests until all have completed; past the deadline, ends the job.
  void wait() override {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(timeoutSeconds());
    for (int polls = 0; !requests_.empty(); ++polls) {
      // Oldest first: the one that did not complete is named.
      int done = 0;
      NN_MPI_CHECK(MPI_Test(&requests_[first_], &done, MPI_STATUS_IGNORE));
      if (done && ++first_ == requests_.size()) {
        clearStarted();
        return;
      }
      if (done) continue;
      // MPI progresses inside its calls, and a sum takes several polls of every rank: poll at
      // once (yielding the core to any thread that wants it) for as long as another rank's step
      // is commonly late, then let the CPU go; a sleep between polls delays each of the sum's
      // steps by itself (bench/README.md, "Measurements behind the code").
      const auto now = Clock::now();
      if (now - start < kBusyPoll)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (polls % 1024 == 0 && now > deadline) {
        const Started& what = started_[first_];
        std::ostringstream message;
        message << "nn.ProcessGroup: rank " << rank_ << " of " << size_ << ": " << what.name;
        if (what.tensor.numel() > 0) message << " of " << what.tensor.shapeString();
        message << " did not complete within " << timeoutSeconds()
                << " s; another rank stopped, or called another collective. Ending the job.";
        endJob(message.str());
      }
    }
  }

 private:
  // What a started request belongs to, for the message of a collective that does not complete.
  struct Started {
    const char* name;
    Tensor tensor;
  };

  // Says why on stderr and ends every rank of the job.
  [[noreturn]] void endJob(const std::string& message) { abort(message, 1); }

  static void checkContiguous(const Tensor& t, const char* what) {
    NN_CHECK(t.isContiguous(), "nn.ProcessGroup." << what << ": expected a contiguous tensor, got sizes "
                                                  << t.shapeString() << " with strides "
                                                  << nn::shapeString(t.strides()));
  }

  // A request at the end of the started ones, for an MPI_I* call to fill in.
  MPI_Request* newRequest() {
    requests_.push_back(MPI_REQUEST_NULL);
    return &requests_.back();
  }
  // Names the requests added since the last call (a collective in several pieces has several).
  void started(const Tensor& t, const char* name) {
    while (started_.size() < requests_.size()) started_.push_back({name, t});
  }
  void clearStarted() {
    requests_.clear();
    started_.clear();
    first_ = 0;
  }

  // The collective `start` begins (an MPI_I* call on data, count, request) over t's floats, in
  // pieces of at most kMaxCount (MPI's counts are int).
  template <typename Start>
  void inPieces(Tensor& t, Start start) {
    float* data = t.numel() > 0 ? t.data() : nullptr;
    for (int64_t done = 0, n = t.numel(); done < n; done += kMaxCount)
      NN_MPI_CHECK(start(data + done, static_cast<int>(std::min(kMaxCount, n - done)), newRequest()));
  }

  // The NCCL communicator of t's CUDA device, set up (a collective of every rank) on first use.
  NcclGroup& nccl(const Tensor& t) {
    std::unique_ptr<NcclGroup>& group = nccl_[t.device().index()];
    if (!group)
      group = makeNcclGroup(
          t.device(), rank_, size_,
          [&](void* bytes, size_t n) {
            NN_MPI_CHECK(MPI_Ibcast(bytes, static_cast<int>(n), MPI_BYTE, 0, comm_, newRequest()));
            started(Tensor(), "the broadcast of NCCL's unique id");
            wait();
          },
          NcclDeadline{[this] { return timeoutSeconds(); }, [this](const std::string& m) { endJob(m); }});
    return *group;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  // The requests started and not yet waited for, in the order they were started; those before
  // first_ have completed.
  std::vector<MPI_Request> requests_;
  std::vector<Started> started_;
  size_t first_ = 0;
  std::map<int, std::unique_ptr<NcclGroup>> nccl_;
};

}  // namespace

std::shared_ptr<ProcessGroup> mpiProcessGroup(MPI_Comm comm) { return std::make_shared<MpiProcessGroup>(comm); }

std::shared_ptr<ProcessGroup> ProcessGroup::world() {
  MpiRuntime::ensure();
  return mpiProcessGroup(MPI_COMM_WORLD);
}

}  // namespace nn

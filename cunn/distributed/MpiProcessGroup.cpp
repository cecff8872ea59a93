// nn::ProcessGroup on MPI. Every collective is MPI's non-blocking one, completed by polling
// MPI_Test against a deadline: past it, the job is ended with MPI_Abort and a message naming
// the rank and the collective, so that a rank that died or went another way hangs no other.
#include "cunn/distributed/MpiProcessGroup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "nn/Error.h"

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

  void allReduceSum(Tensor& t) override {
    inPieces(t, "allReduceSum", true, [&](float* data, int count, MPI_Request* request) {
      return MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, comm_, request);
    });
  }

  void broadcast(Tensor& t, int root) override {
    NN_CHECK(root >= 0 && root < size_,
             "nn.ProcessGroup.broadcast: expected a root rank from 0 to " << size_ - 1 << ", got " << root);
    inPieces(t, "broadcast", rank_ == root, [&](float* data, int count, MPI_Request* request) {
      return MPI_Ibcast(data, count, MPI_FLOAT, root, comm_, request);
    });
  }

  std::vector<std::string> allGather(const std::string& text) override {
    NN_CHECK(text.size() < static_cast<size_t>(kMaxCount),
             "nn.ProcessGroup.allGather: a text of " << text.size() << " bytes is too long");
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size_));
    MPI_Request request;
    NN_MPI_CHECK(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, &request));
    wait(request, "allGather", Tensor());
    std::vector<int> offsets(lengths.size());
    int64_t total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    NN_CHECK(total < kMaxCount, "nn.ProcessGroup.allGather: " << total << " bytes in all is too much");
    std::string all(static_cast<size_t>(total), '\0');
    NN_MPI_CHECK(MPI_Iallgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                                 comm_, &request));
    wait(request, "allGather", Tensor());
    std::vector<std::string> texts;
    for (size_t r = 0; r < lengths.size(); ++r)
      texts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
    return texts;
  }

  void barrier() override {
    MPI_Request request;
    NN_MPI_CHECK(MPI_Ibarrier(comm_, &request));
    wait(request, "barrier", Tensor());
  }

 private:
  // The host floats a collective works on: t's own on a CPU device, else a staging copy (with
  // t's values where `values`). t must be contiguous.
  float* hostData(Tensor& t, const char* what, bool values) {
    NN_CHECK(t.isContiguous(), "nn.ProcessGroup." << what << ": expected a contiguous tensor, got sizes "
                                                  << t.shapeString() << " with strides "
                                                  << nn::shapeString(t.strides()));
    if (t.device().isCpu()) return t.numel() > 0 ? t.data() : nullptr;
    staging_.resize_(t.sizes(), Device());
    if (values) staging_.copy_(t);
    return staging_.data();
  }
  // The collective `start` begins (an MPI_I* call on data, count, request) over t's host floats
  // (with t's values where `values`), in pieces of at most kMaxCount, each waited for; then the
  // result back into t where it was staged.
  template <typename Start>
  void inPieces(Tensor& t, const char* what, bool values, Start start) {
    float* data = hostData(t, what, values);
    for (int64_t done = 0, n = t.numel(); done < n; done += kMaxCount) {
      MPI_Request request;
      NN_MPI_CHECK(start(data + done, static_cast<int>(std::min(kMaxCount, n - done)), &request));
      wait(request, what, t);
    }
    if (!t.device().isCpu()) t.copy_(staging_);
  }

  // Polls `request` until it completes; past the deadline, ends the job.
  void wait(MPI_Request& request, const char* what, const Tensor& t) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds());
    for (int polls = 0;; ++polls) {
      int done = 0;
      NN_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      if (done) return;
      // MPI progresses inside its calls: poll at once for a while, then let the CPU go.
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (polls % 1024 == 0 && Clock::now() > deadline) {
        std::fprintf(stderr,
                     "nn.ProcessGroup: rank %d of %d: %s%s%s did not complete within %g s; another rank "
                     "stopped, or called another collective. Ending the job.\n",
                     rank_, size_, what, t.numel() > 0 ? " of " : "", t.numel() > 0 ? t.shapeString().c_str() : "",
                     timeoutSeconds());
        std::fflush(stderr);
        MPI_Abort(comm_, 1);
      }
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  Tensor staging_;
};

}  // namespace

std::shared_ptr<ProcessGroup> mpiProcessGroup(MPI_Comm comm) { return std::make_shared<MpiProcessGroup>(comm); }

std::shared_ptr<ProcessGroup> ProcessGroup::world() {
  MpiRuntime::ensure();
  return mpiProcessGroup(MPI_COMM_WORLD);
}

}  // namespace nn

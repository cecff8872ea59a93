// nn::ProcessGroup on MPI. Every collective is non-blocking, completed by polling MPI_Test
// against a deadline: past it, the job is ended with MPI_Abort and a message naming the rank and
// the collective, so that a rank that died or went another way hangs no other. The sums of CPU
// tensors are a ring of point-to-point messages of this file's own (Note [The ring's sums]); the
// other collectives are MPI's non-blocking ones.
// Tensors on CUDA devices go through NCCL (NcclGroup.h), bootstrapped over this group, under the
// same deadline and ending the job the same way.
#include "nn/distributed/MpiProcessGroup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "nn/distributed/NcclGroup.h"
#include "nn/math/Half.h"
#include "nn/tensor/Error.h"

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

// A ring's messages are tagged with its sum's size modulo this (MPI allows tags up to 32767 at least).
constexpr int kRingTags = 32768;

// How long a wait polls its collectives without sleeping (see wait()).
constexpr std::chrono::milliseconds kBusyPoll{2};

// Note [The ring's sums]
// MPI's non-blocking all-reduce (MPI_Iallreduce, Open MPI's libnbc) takes longer than its
// blocking MPI_Allreduce for the gradients of a step (bench/README.md, "The synchronous limit"),
// and a blocking call would have no deadline. A sum of n floats over N ranks is therefore a ring
// of MPI_Irecv from the previous rank and MPI_Isend to the next, in 2(N - 1) steps over N chunks
// of n / N floats: in the first N - 1 (reduce-scatter) each rank sends a chunk and adds the chunk
// it receives into its own, after which rank r holds the whole sum of chunk r + 1; in the last
// N - 1 (all-gather) the summed chunks go round. Each chunk is summed along one path and copied
// to the other ranks: every rank ends with the same bits. A step is posted once the one before
// has completed, and only for the oldest collective (collectives complete in order anyway): polls
// drive it, as MPI's own calls drive its collectives. The messages are tagged with the sum's
// size, so that a rank that went another way (a sum of another size) receives nothing and the
// deadline names the collective.
// A sum in bfloat16 (startAllReduceSumBfloat16) takes the same steps with every chunk sent as
// bfloat16, rounded to nearest even, and received into a buffer of its own: a partial sum
// received is added to the rank's float32 chunk; a summed chunk received replaces it. A rank
// rounds each chunk it sends while gathering in place too, so that the rank that summed it holds
// the bits the others receive.

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

  void startAllReduceSum(Tensor& t) override { startRing(t, "allReduceSum", false); }
  void startAllReduceSumBfloat16(Tensor& t) override { startRing(t, "allReduceSum in bfloat16", true); }

  void broadcast(Tensor& t, int root) override {
    NN_CHECK(root >= 0 && root < size_,
             "nn.ProcessGroup.broadcast: expected a root rank from 0 to " << size_ - 1 << ", got " << root);
    checkContiguous(t, "broadcast");
    if (!t.device().isCpu()) return nccl(t).broadcast(t, root);
    float* data = t.numel() > 0 ? t.data() : nullptr;
    for (int64_t done = 0, n = t.numel(); done < n; done += kMaxCount)
      NN_MPI_CHECK(MPI_Ibcast(data + done, static_cast<int>(std::min(kMaxCount, n - done)), MPI_FLOAT, root, comm_,
                              newRequest("broadcast", t)));
    wait();
  }

  std::vector<std::string> allGather(const std::string& text) override {
    NN_CHECK(text.size() < static_cast<size_t>(kMaxCount),
             "nn.ProcessGroup.allGather: a text of " << text.size() << " bytes is too long");
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size_));
    NN_MPI_CHECK(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, newRequest("allGather")));
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
                                 comm_, newRequest("allGather")));
    wait();
    std::vector<std::string> texts;
    for (size_t r = 0; r < lengths.size(); ++r)
      texts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
    return texts;
  }

  void barrier() override {
    NN_MPI_CHECK(MPI_Ibarrier(comm_, newRequest("barrier")));
    wait();
  }

  void progress() override {
    while (first_ < pending_.size() && poll(pending_[first_])) ++first_;
    if (first_ == pending_.size()) clearStarted();
  }

  // Polls the started collectives until all have completed; past the deadline, ends the job.
  void wait() override {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(timeoutSeconds());
    for (int polls = 0; first_ < pending_.size(); ++polls) {
      // Oldest first: the one that did not complete is named.
      if (poll(pending_[first_])) {
        if (++first_ == pending_.size()) break;
        continue;
      }
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
        const Pending& what = pending_[first_];
        std::ostringstream message;
        message << "nn.ProcessGroup: rank " << rank_ << " of " << size_ << ": " << what.name;
        if (what.tensor.numel() > 0) message << " of " << what.tensor.shapeString();
        message << " did not complete within " << timeoutSeconds()
                << " s; another rank stopped, or called another collective. Ending the job.";
        endJob(message.str());
      }
    }
    clearStarted();
  }

 private:
  // A started collective: MPI's own (`request`), or a ring's sum of `count` floats at `data`
  // (Note [The ring's sums]) whose next step is `step`, and the tensor it belongs to, named in the
  // message of a collective that does not complete.
  struct Pending {
    const char* name;
    Tensor tensor;
    MPI_Request request = MPI_REQUEST_NULL;
    float* data = nullptr;
    int count = 0;
    int step = -1;  // -1: MPI's collective
    // The ring's present step: its receive and its send, posted or not.
    MPI_Request messages[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    bool posted = false;
    bool bfloat16 = false;  // the chunks travel as bfloat16
  };

  // Says why on stderr and ends every rank of the job.
  // This class's abort, called as such: a virtual call would not tell the compiler that it
  // does not return.
  [[noreturn]] void endJob(const std::string& message) { MpiProcessGroup::abort(message, 1); }

  // A ring's sum of t (Note [The ring's sums]), in pieces of at most kMaxCount floats; a CUDA
  // tensor's by NCCL, in float32.
  void startRing(Tensor& t, const char* name, bool bfloat16) {
    checkContiguous(t, "allReduceSum");
    if (!t.device().isCpu()) return nccl(t).allReduceSum(t);
    float* data = t.numel() > 0 ? t.data() : nullptr;
    for (int64_t done = 0, n = t.numel(); done < n; done += kMaxCount) {
      Pending ring{name, t};
      ring.data = data + done;
      ring.count = static_cast<int>(std::min(kMaxCount, n - done));
      ring.step = 0;
      ring.bfloat16 = bfloat16;
      pending_.push_back(ring);
    }
  }

  static void checkContiguous(const Tensor& t, const char* what) {
    NN_CHECK(t.isContiguous(), "nn.ProcessGroup." << what << ": expected a contiguous tensor, got sizes "
                                                  << t.shapeString() << " with strides "
                                                  << nn::shapeString(t.strides()));
  }

  // A request at the end of the started collectives, for an MPI_I* call to fill in.
  MPI_Request* newRequest(const char* name, const Tensor& t = Tensor()) {
    pending_.push_back({name, t});
    return &pending_.back().request;
  }
  void clearStarted() {
    pending_.clear();
    first_ = 0;
  }

  // Whether collective p has completed; moves a ring's sum on by the steps that can be taken.
  bool poll(Pending& p) {
    int done = 0;
    if (p.step < 0) {
      NN_MPI_CHECK(MPI_Test(&p.request, &done, MPI_STATUS_IGNORE));
      return done != 0;
    }
    const int steps = 2 * (size_ - 1);
    while (p.step < steps) {
      if (!p.posted) {
        postRingStep(p);
        continue;
      }
      NN_MPI_CHECK(MPI_Testall(2, p.messages, &done, MPI_STATUSES_IGNORE));
      if (!done) return false;
      if (p.step < size_ - 1) {
        // Reduce-scatter: the chunk received is added into this rank's.
        const Chunk c = chunk(p, rank_ - p.step - 1);
        float* sum = p.data + c.start;
        if (p.bfloat16) {
          const uint16_t* received = received16_.data();
          for (int i = 0; i < c.count; ++i) sum[i] += math::bfloat16ToFloat(received[i]);
        } else {
          const float* received = scratch_.data();
          for (int i = 0; i < c.count; ++i) sum[i] += received[i];
        }
      } else if (p.bfloat16) {
        // All-gather: the summed chunk received replaces this rank's.
        const Chunk c = chunk(p, rank_ - (p.step - (size_ - 1)));
        float* into = p.data + c.start;
        const uint16_t* received = received16_.data();
        for (int i = 0; i < c.count; ++i) into[i] = math::bfloat16ToFloat(received[i]);
      }
      ++p.step;
      p.posted = false;
    }
    return true;
  }

  // Floats [start, start + count) of a ring's sum: its chunk `index` (modulo the ranks).
  struct Chunk {
    int start, count;
  };
  Chunk chunk(const Pending& p, int index) const {
    const int64_t c = ((index % size_) + size_) % size_;
    const int64_t start = p.count * c / size_, end = p.count * (c + 1) / size_;
    return {static_cast<int>(start), static_cast<int>(end - start)};
  }

  // Posts step p.step of a ring's sum: a chunk sent to the next rank, another received from the
  // previous one (into the scratch buffer while summing, into place while gathering).
  void postRingStep(Pending& p) {
    const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
    const int tag = p.count % kRingTags;
    const bool summing = p.step < size_ - 1;
    const int s = summing ? p.step : p.step - (size_ - 1);
    const Chunk out = summing ? chunk(p, rank_ - s) : chunk(p, rank_ + 1 - s);
    const Chunk in = summing ? chunk(p, rank_ - s - 1) : chunk(p, rank_ - s);
    if (p.bfloat16) {
      // The chunk out as bfloat16; while gathering, this rank's own rounded alike (Note [The
      // ring's sums]). The buffers grow to the largest chunk, then are kept.
      if (sent16_.size() < static_cast<size_t>(out.count)) sent16_.resize(static_cast<size_t>(out.count));
      if (received16_.size() < static_cast<size_t>(in.count)) received16_.resize(static_cast<size_t>(in.count));
      float* chunkOut = p.data + out.start;
      for (int i = 0; i < out.count; ++i) {
        sent16_[static_cast<size_t>(i)] = math::floatToBfloat16(chunkOut[i]);
        if (!summing) chunkOut[i] = math::bfloat16ToFloat(sent16_[static_cast<size_t>(i)]);
      }
      NN_MPI_CHECK(MPI_Irecv(received16_.data(), in.count, MPI_UINT16_T, previous, tag, comm_, &p.messages[0]));
      NN_MPI_CHECK(MPI_Isend(sent16_.data(), out.count, MPI_UINT16_T, next, tag, comm_, &p.messages[1]));
      p.posted = true;
      return;
    }
    float* into = p.data + in.start;
    if (summing) {
      if (scratch_.size() < static_cast<size_t>(in.count)) scratch_.resize(static_cast<size_t>(in.count));
      into = scratch_.data();
    }
    NN_MPI_CHECK(MPI_Irecv(into, in.count, MPI_FLOAT, previous, tag, comm_, &p.messages[0]));
    NN_MPI_CHECK(MPI_Isend(p.data + out.start, out.count, MPI_FLOAT, next, tag, comm_, &p.messages[1]));
    p.posted = true;
  }

  // The NCCL communicator of t's CUDA device, set up (a collective of every rank) on first use.
  NcclGroup& nccl(const Tensor& t) {
    std::unique_ptr<NcclGroup>& group = nccl_[t.device().index()];
    if (!group)
      group = makeNcclGroup(
          t.device(), rank_, size_,
          [&](void* bytes, size_t n) {
            NN_MPI_CHECK(
                MPI_Ibcast(bytes, static_cast<int>(n), MPI_BYTE, 0, comm_, newRequest("the broadcast of NCCL's unique id")));
            wait();
          },
          NcclDeadline{[this] { return timeoutSeconds(); }, [this](const std::string& m) { endJob(m); }});
    return *group;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  // The collectives started and not yet waited for, in the order they were started; those before
  // first_ have completed.
  std::vector<Pending> pending_;
  size_t first_ = 0;
  // What a ring's rank receives while summing: grown to the largest chunk, then kept.
  std::vector<float> scratch_;
  // A bfloat16 ring's chunk sent and received.
  std::vector<uint16_t> sent16_, received16_;
  std::map<int, std::unique_ptr<NcclGroup>> nccl_;
};

}  // namespace

std::shared_ptr<ProcessGroup> mpiProcessGroup(MPI_Comm comm) { return std::make_shared<MpiProcessGroup>(comm); }

std::shared_ptr<ProcessGroup> ProcessGroup::world() {
  MpiRuntime::ensure();
  return mpiProcessGroup(MPI_COMM_WORLD);
}

}  // namespace nn

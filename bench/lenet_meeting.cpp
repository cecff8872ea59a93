// examples/lenet in a process that meets other such processes at every training step and
// exchanges nothing with them: the limit of a synchronous data-parallel step on these cores.
// Two processes that train on their own absorb each one's slow steps in their own images/s; two
// that meet every step wait for the later one each time, as a DataParallelTable's devices and
// DistributedDataParallelTable's ranks do, but without any collective's cost.
// tools/bench-data-parallel.sh runs it beside them.
//
//   lenet_meeting --meet FILE --meet-rank R [--meet-size N] [lenet's flags...]
//
// The N processes of one meeting are started on their own (not under mpirun, which would make
// them ranks of a DistributedDataParallelTable), each with its rank 0 .. N-1 and the same FILE,
// which must be new (or empty): each process's count of meetings lies in it, at an offset of
// its own. They meet once when the network is built (after the data has loaded, so that the
// epoch's clock starts together) and then at the start of every training step's backward (a
// module after the network's last passes gradOutput back once each process has reached it).
// A wait polls as a rank waits for a collective (nn/distributed/MpiProcessGroup.cpp): at once,
// yielding its core to any thread that wants it, for kBusyPoll, then with a short sleep between
// polls, so that a waiting process leaves the cores to the others as a rank does. A process that
// does not come within kTimeout ends the others with an error naming it.
// At exit it prints its time waiting at the start and at the steps' meetings to stderr.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "examples/LeNet.h"
#include "examples/Trainer.h"
#include "nn/modules/Identity.h"
#include "nn/tensor/Error.h"

namespace {

using Clock = std::chrono::steady_clock;

// How long a process waits for the others at a meeting before it ends with an error.
constexpr std::chrono::seconds kTimeout{300};
// How long a wait polls without sleeping, and the sleep between polls after it: a rank's.
constexpr std::chrono::milliseconds kBusyPoll{2};
constexpr std::chrono::microseconds kSleep{50};

// One process's count of meetings, a cache line each so that no two processes write one line.
struct alignas(64) Slot {
  uint64_t arrived;
};

// The meeting place of N processes: a file mapped by each, a slot per rank. Meeting k, a process
// writes k into its slot and waits until every other slot holds k or more; the counts only grow,
// so a zeroed file needs no set-up and no process resets anything.
class Meeting {
 public:
  Meeting(const std::string& path, int rank, int size) : path_(path), rank_(rank), size_(size) {
    NN_CHECK(size >= 2, "lenet_meeting: --meet-size expects 2 processes or more, got " << size);
    NN_CHECK(rank >= 0 && rank < size,
             "lenet_meeting: --meet-rank expects a rank from 0 to " << size - 1 << ", got " << rank);
    const size_t bytes = sizeof(Slot) * static_cast<size_t>(size);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
    NN_CHECK(fd >= 0, "lenet_meeting: cannot open the meeting file " << path << ": " << std::strerror(errno));
    struct stat st {};
    // Every process extends the file to the slots' size; one that is longer already is kept.
    const bool sized = ::fstat(fd, &st) == 0 &&
                       (static_cast<size_t>(st.st_size) >= bytes || ::ftruncate(fd, static_cast<off_t>(bytes)) == 0);
    void* mapped = sized ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    const int error = errno;
    ::close(fd);
    NN_CHECK(mapped != MAP_FAILED,
             "lenet_meeting: cannot map " << bytes << " bytes of the meeting file " << path << ": " << std::strerror(error));
    slots_ = static_cast<Slot*>(mapped);
    bytes_ = bytes;
    NN_CHECK(load(rank_) == 0, "lenet_meeting: the meeting file " << path << " holds rank " << rank_ << "'s "
                                                                   << load(rank_)
                                                                   << " meetings of an earlier run; give a new file");
  }
  ~Meeting() { ::munmap(slots_, bytes_); }
  Meeting(const Meeting&) = delete;
  Meeting& operator=(const Meeting&) = delete;

  // Returns once every process has come to this meeting.
  void meet() {
    const auto start = Clock::now();
    ++count_;
    __atomic_store_n(&slots_[rank_].arrived, count_, __ATOMIC_RELEASE);
    for (int other = 0; other < size_; ++other)
      for (uint64_t polls = 0; load(other) < count_; ++polls) {
        const auto waited = Clock::now() - start;
        if (waited < kBusyPoll)
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(kSleep);
        if (polls % 1024 == 1023 && waited > kTimeout)
          NN_CHECK(false, "lenet_meeting: rank " << rank_ << " of " << size_ << " waited " << kTimeout.count()
                                                 << " s at meeting " << count_ << " (" << path_ << ") for rank "
                                                 << other << ", which has come to " << load(other)
                                                 << "; it stopped or trains another number of steps");
      }
    waited_ += Clock::now() - start;
  }

  uint64_t meetings() const { return count_; }
  double waitedSeconds() const { return std::chrono::duration<double>(waited_).count(); }

 private:
  uint64_t load(int rank) const { return __atomic_load_n(&slots_[rank].arrived, __ATOMIC_ACQUIRE); }

  std::string path_;
  int rank_, size_;
  Slot* slots_ = nullptr;
  size_t bytes_ = 0;
  uint64_t count_ = 0;
  Clock::duration waited_{};
};

// The network's last module: passes the input forward and, in backward, gradOutput back once
// every process has come to the same step's backward.
class MeetingPoint : public nn::Identity {
 public:
  explicit MeetingPoint(Meeting& meeting) : meeting_(meeting) {}

  const nn::Activity& updateGradInputActivity(const nn::Activity& input, const nn::Activity& gradOutput) override {
    meeting_.meet();
    return nn::Identity::updateGradInputActivity(input, gradOutput);
  }
  std::string typeName() const override { return "bench.MeetingPoint"; }

 private:
  Meeting& meeting_;
};

[[noreturn]] void usage(const std::string& error) {
  std::fprintf(stderr,
               "lenet_meeting: %s\n"
               "usage: lenet_meeting --meet FILE --meet-rank R [--meet-size N] [lenet's flags; one device]\n",
               error.c_str());
  std::exit(2);
}

int number(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || v < 0 || v > 1 << 20)
    usage(flag + " expects a number from 0 to 1048576, got '" + value + "'");
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  // The meeting's flags, taken out; the rest are the example's.
  std::string path;
  int rank = -1, size = 2;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool ours = arg == "--meet" || arg == "--meet-rank" || arg == "--meet-size";
    if (!ours) {
      // Several devices would make a DataParallelTable, each replica a meeting point of its own.
      if (arg == "--devices" && i + 1 < argc && std::strchr(argv[i + 1], ',') != nullptr)
        usage(std::string("expects one device a process, got --devices ") + argv[i + 1]);
      rest.push_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) usage(arg + " expects a value");
    const std::string value = argv[++i];
    if (arg == "--meet")
      path = value;
    else if (arg == "--meet-rank")
      rank = number(arg, value);
    else
      size = number(arg, value);
  }
  if (path.empty() || rank < 0) usage("expects --meet FILE and --meet-rank R");
  const char* ranks = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (ranks != nullptr && std::atoi(ranks) > 1) usage("runs its processes on their own, not under mpirun");
  rest.push_back(nullptr);

  std::unique_ptr<Meeting> meeting;
  try {
    meeting = std::make_unique<Meeting>(path, rank, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  double startWaited = 0;
  const examples::ExampleSettings settings{"lenet_meeting", examples::TrainingDefaults(), [&] {
                                             // The start: every process has its data and its network.
                                             meeting->meet();
                                             startWaited = meeting->waitedSeconds();
                                             std::shared_ptr<nn::Sequential> net = examples::lenet();
                                             net->add(std::make_shared<MeetingPoint>(*meeting));
                                             return net;
                                           }};
  const int status = examples::trainMain(static_cast<int>(rest.size()) - 1, rest.data(), settings);
  // The steps' meetings apart from the start's, whose wait is the difference of the data's loads.
  const uint64_t steps = meeting->meetings() > 0 ? meeting->meetings() - 1 : 0;
  const double waited = meeting->waitedSeconds() - startWaited;
  std::fprintf(stderr, "lenet_meeting: rank %d waited %.3f s at the start, %.3f s at %llu steps' meetings, %.3f ms a step\n",
               rank, startWaited, waited, static_cast<unsigned long long>(steps),
               steps > 0 ? 1e3 * waited / static_cast<double>(steps) : 0.0);
  return status;
}

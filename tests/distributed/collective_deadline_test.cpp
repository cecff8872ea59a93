// nn::CollectiveDeadline, the deadline of the collectives NCCL queues on a device, with a
// stand-in for the device and the communicator: collectives complete when the test says so, the
// clock is the test's, the communicator's error is the test's, and `fail` throws its message
// (NCCL's own aborts the communicator and ends the job). The NCCL wiring around it
// (nn/distributed/NcclGroup.cpp) needs two GPUs, one per rank.
#include "nn/distributed/CollectiveDeadline.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>

#include "nn/tensor/Error.h"

using nn::CollectiveDeadline;
using nn::Tensor;
using namespace std::chrono_literals;

namespace {

// Rank 1 of 3 with a stand-in device and communicator.
struct StandIn {
  std::set<int64_t> done;
  std::string error;
  int fails = 0;
  CollectiveDeadline deadline{1, 3,
                              {[this](int64_t token) { return done.count(token) > 0; }, [this] { return error; },
                               [this](const std::string& message) {
                                 ++fails;
                                 throw nn::Error(message);
                               }}};
};

const CollectiveDeadline::Clock::time_point kStart = CollectiveDeadline::Clock::time_point{} + 1h;

}  // namespace

TEST_CASE("CollectiveDeadline forgets completed collectives and fails past the timeout, naming the collective",
          "[ProcessGroup]") {
  StandIn s;
  s.deadline.queued("allReduceSum", Tensor::zeros({1000}), 1, kStart);
  s.deadline.queued("broadcast", Tensor::zeros({4, 5}), 2, kStart + 1s);
  REQUIRE(s.deadline.pending() == 2);
  s.deadline.poll(5, kStart + 4s);
  REQUIRE(s.deadline.pending() == 2);
  // The first completed 5.5 s after it was queued; the second, queued at 1 s, is within 5 s.
  s.done.insert(1);
  s.deadline.poll(5, kStart + 5500ms);
  REQUIRE(s.deadline.pending() == 1);
  REQUIRE(s.fails == 0);
  REQUIRE_THROWS_WITH(s.deadline.poll(5, kStart + 6500ms),
                      "nn.ProcessGroup: rank 1 of 3: NCCL broadcast of [4, 5] did not complete within 5 s; another "
                      "rank stopped, or called another collective. Ending the job.");
  REQUIRE(s.fails == 1);
  // Once it completes, nothing is pending, however late.
  s.done.insert(2);
  s.deadline.poll(5, kStart + 10h);
  REQUIRE(s.deadline.pending() == 0);
  REQUIRE(s.fails == 1);
}

TEST_CASE("CollectiveDeadline forgets collectives in their order: a later one's completion leaves an earlier one due",
          "[ProcessGroup]") {
  StandIn s;
  s.deadline.queued("allReduceSum", Tensor::zeros({7}), 1, kStart);
  s.deadline.queued("allReduceSum", Tensor::zeros({3}), 2, kStart);
  s.done.insert(2);
  s.deadline.poll(30, kStart + 10s);
  REQUIRE(s.deadline.pending() == 2);
  REQUIRE_THROWS_WITH(s.deadline.poll(30, kStart + 31s), Catch::StartsWith("nn.ProcessGroup: rank 1 of 3: NCCL "
                                                                           "allReduceSum of [7] did not complete"));
}

TEST_CASE("CollectiveDeadline fails at once on the communicator's error, naming it and the collective running",
          "[ProcessGroup]") {
  StandIn s;
  s.deadline.queued("allReduceSum", Tensor::zeros({1000}), 1, kStart);
  s.error = "remote process exited or there was a network error (socket closed)";
  REQUIRE_THROWS_WITH(s.deadline.poll(600, kStart + 1ms),
                      "nn.ProcessGroup: rank 1 of 3: NCCL reports remote process exited or there was a network error "
                      "(socket closed) while rank 1 of 3: NCCL allReduceSum of [1000] was running. Ending the job.");
  // An error with nothing pending is still the job's end.
  StandIn idle;
  idle.error = "unhandled system error";
  REQUIRE_THROWS_WITH(idle.deadline.poll(600, kStart),
                      "nn.ProcessGroup: rank 1 of 3: NCCL reports unhandled system error. Ending the job.");
}

TEST_CASE("CollectiveDeadline with nothing queued never fails, and a collective of no elements is named alone",
          "[ProcessGroup]") {
  StandIn s;
  s.deadline.poll(1, kStart + 100h);
  REQUIRE(s.fails == 0);
  s.deadline.queued("barrier", Tensor(), 1, kStart);
  REQUIRE_THROWS_WITH(s.deadline.poll(1, kStart + 2s),
                      Catch::StartsWith("nn.ProcessGroup: rank 1 of 3: NCCL barrier did not complete within 1 s"));
}

TEST_CASE("CollectiveDeadline keeps only the pending collectives, however many a training queues", "[ProcessGroup]") {
  // Each collective completes before the next is queued, with no poll between: the deadline
  // forgets them as it goes.
  StandIn s;
  for (int64_t token = 1; token <= 1000; ++token) {
    s.deadline.queued("allReduceSum", Tensor(), token, kStart);
    REQUIRE(s.deadline.pending() == 1);
    s.done.insert(token);
  }
  s.deadline.poll(1, kStart + 10s);
  REQUIRE(s.deadline.pending() == 0);
  REQUIRE(s.fails == 0);
}

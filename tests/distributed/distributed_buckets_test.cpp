// DistributedDataParallelTable's buckets, in one process: a stand-in group of two ranks whose
// other rank has the same gradients, so that a sum doubles a bucket at the moment it starts.
// A bucket started before its gradients are final would miss what came after, and the
// averaged gradients would differ from a plain module's; the log shows each sum starting
// while backward is still at work on the modules below.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cunn/cunn.h"
#include "nn/distributed/DistributedDataParallelTable.h"
#include "nn/distributed/ProcessGroup.h"
#include "tests/support/Profiling.h"

using nn::Tensor;

namespace {

// Rank 0 of two, the other rank's tensors equal to this one's: a sum doubles at its start.
class MirrorGroup : public nn::ProcessGroup {
 public:
  explicit MirrorGroup(std::vector<std::string>& log, int waitMilliseconds = 0)
      : log_(log), waitMilliseconds_(waitMilliseconds) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void startAllReduceSum(Tensor& t) override {
    log_.push_back("sum " + std::to_string(t.numel()));
    t.mul_(2);
  }
  void progress() override {}
  void wait() override {
    log_.push_back("wait");
    std::this_thread::sleep_for(std::chrono::milliseconds(waitMilliseconds_));
  }
  void broadcast(Tensor&, int) override {}
  std::vector<std::string> allGather(const std::string& text) override { return {text, text}; }
  void barrier() override {}

 private:
  std::vector<std::string>& log_;
  int waitMilliseconds_;
};

// A Linear that logs its accGradParameters.
class LoggedLinear : public nn::Linear {
 public:
  LoggedLinear(int64_t in, int64_t out, std::vector<std::string>& log) : nn::Linear(in, out), log_(log) {}
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override {
    log_.push_back("gradients of " + toString());
    nn::Linear::accGradParameters(input, gradOutput, scale);
  }

 private:
  std::vector<std::string>& log_;
};

// The gradients after one forward and backward of `model` on a fixed batch of 5.
std::vector<float> gradientsAfterStep(nn::Module& model) {
  nn::Generator g(7);
  const Tensor x = Tensor::rand({5, 4}, g);
  const Tensor y = Tensor::fromVector({5}, {0, 1, 0, 1, 1});
  nn::ClassNLLCriterion criterion;
  model.zeroGradParameters();
  criterion.forward(model.forward(x), y);
  model.backward(x, criterion.backward(model.output, y));
  return model.getParameters().second.toVector();
}

double maxDifference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double most = 0;
  for (size_t i = 0; i < a.size(); ++i) most = std::max(most, static_cast<double>(std::abs(a[i] - b[i])));
  return most;
}

nn::DistributedDataParallelTable::Options bucketsOf(int64_t floats) {
  nn::DistributedDataParallelTable::Options options;
  options.bucketMegabytes = static_cast<double>(floats) * sizeof(float) / (1 << 20);
  return options;
}

}  // namespace

TEST_CASE("each bucket's sum starts once backward has finished its gradients", "[distributed]") {
  std::vector<std::string> log;
  auto net = [&log] {
    nn::manualSeed(1);
    return std::make_shared<nn::Sequential>(
        std::vector<nn::ModulePtr>{std::make_shared<LoggedLinear>(4, 3, log), nn::make<nn::Tanh>(),
                                   std::make_shared<LoggedLinear>(3, 2, log), nn::make<nn::LogSoftMax>()});
  };
  const std::vector<float> expected = gradientsAfterStep(*net());
  // 23 gradients: the first Linear's 12 + 3 in [0, 15), the second's 6 + 2 in [15, 23). Buckets
  // of 8 from the end: [15, 23) is the second Linear's, [7, 15) and [0, 7) the first's.
  nn::DistributedDataParallelTable model(net(), std::make_shared<MirrorGroup>(log), bucketsOf(8));
  log.clear();
  const std::vector<float> gradients = gradientsAfterStep(model);
  // Weighted by its batch of 5 before the sums, divided by 10 after them: rounding apart.
  CHECK(maxDifference(gradients, expected) < 1e-6);
  CHECK(log == std::vector<std::string>{
                   "sum 3",  // the step's check, started before the gradInputs, waited for at the end
                   "gradients of nn.Linear(3 -> 2)",
                   "sum 8",  // the second Linear's bucket, while the first's gradients are computed
                   "gradients of nn.Linear(4 -> 3)",
                   "sum 8",
                   "sum 7",
                   "wait",
               });
}

TEST_CASE("the first parameters' gradients, up to a parameter's end, are the last bucket alone", "[distributed]") {
  std::vector<std::string> log;
  auto net = [&log] {
    nn::manualSeed(3);
    return std::make_shared<nn::Sequential>(
        std::vector<nn::ModulePtr>{std::make_shared<LoggedLinear>(4, 3, log), nn::make<nn::Tanh>(),
                                   std::make_shared<LoggedLinear>(3, 30, log), nn::make<nn::LogSoftMax>()});
  };
  const std::vector<float> expected = gradientsAfterStep(*net());
  // 135 gradients: the first Linear's 12 + 3 in [0, 15), the second's 90 + 30 in [15, 135).
  // Buckets of 100: [0, 15), the first Linear's, is the last bucket; the rest is cut from the end,
  // [35, 135) and [15, 35), both the second Linear's. Cut from the end alone, [0, 35) would hold
  // 20 of the second Linear's gradients and wait with them for the first's.
  nn::DistributedDataParallelTable model(net(), std::make_shared<MirrorGroup>(log), bucketsOf(100));
  log.clear();
  CHECK(maxDifference(gradientsAfterStep(model), expected) < 1e-6);
  CHECK(log == std::vector<std::string>{"sum 3", "gradients of nn.Linear(3 -> 30)", "sum 100", "sum 20",
                                        "gradients of nn.Linear(4 -> 3)", "sum 15", "wait"});
}

TEST_CASE("a module used twice: its buckets start once both uses have added to its gradients", "[distributed]") {
  std::vector<std::string> log;
  auto net = [&log] {
    nn::manualSeed(2);
    auto twice = std::make_shared<LoggedLinear>(4, 4, log);
    return std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
        twice, nn::make<nn::Tanh>(), twice, nn::make<nn::Linear>(4, 2), nn::make<nn::LogSoftMax>()});
  };
  const std::vector<float> expected = gradientsAfterStep(*net());
  // parameters() lists the shared Linear's twice (Torch7's too), the flat gradient once: 20 + 10
  // gradients, in buckets of 10. Where one gradient has two places, no bucket starts before the
  // end.
  nn::DistributedDataParallelTable model(net(), std::make_shared<MirrorGroup>(log), bucketsOf(10));
  log.clear();
  CHECK(maxDifference(gradientsAfterStep(model), expected) < 1e-6);
  CHECK(log == std::vector<std::string>{"sum 3", "gradients of nn.Linear(4 -> 4)", "gradients of nn.Linear(4 -> 4)",
                                        "sum 10", "sum 10", "sum 10", "wait"});
}

TEST_CASE("around a DataParallelTable: the buckets start once the table has summed its replicas", "[distributed]") {
  auto net = [] {
    nn::manualSeed(3);
    return std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
        nn::make<nn::Linear>(4, 6), nn::make<nn::ReLU>(), nn::make<nn::Linear>(6, 2), nn::make<nn::LogSoftMax>()});
  };
  const std::vector<float> expected = gradientsAfterStep(*net());
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(net(), {nn::Device::cpu(0), nn::Device::cpu(1)});
  std::vector<std::string> log;
  nn::DistributedDataParallelTable model(table, std::make_shared<MirrorGroup>(log), bucketsOf(5));
  log.clear();
  CHECK(maxDifference(gradientsAfterStep(model), expected) < 1e-6);
  // 44 gradients in buckets of 5: all started after the table's accGradParameters.
  std::vector<std::string> expectedLog = {"sum 3"};
  for (int i = 0; i < 8; ++i) expectedLog.push_back("sum 5");
  expectedLog.push_back("sum 4");
  expectedLog.push_back("wait");
  CHECK(log == expectedLog);
}

TEST_CASE("a rank waits once a step, after backward, and its profile shows that wait", "[distributed]") {
  std::vector<std::string> log;
  nn::manualSeed(4);
  auto net = std::make_shared<nn::Sequential>(
      std::vector<nn::ModulePtr>{nn::make<nn::Linear>(4, 3), nn::make<nn::Tanh>(), nn::make<nn::LogSoftMax>()});
  // Each wait takes 3 ms, as if the other rank's backward ended that much later.
  nn::DistributedDataParallelTable model(net, std::make_shared<MirrorGroup>(log, 3));
  nn::PassTime steps;
  {
    nn::test::ProfilingOn on;
    nn::resetProfile(model);
    for (int i = 0; i < 2; ++i) {
      nn::ScopedTimer timer(steps);
      log.clear();
      gradientsAfterStep(model);
      CHECK(std::count(log.begin(), log.end(), "wait") == 1);
    }
  }
  const std::string detail = model.profileDetail(steps);
  INFO(detail);
  const std::string before = "ms per step: ";
  const size_t at = detail.find(before);
  REQUIRE(at != std::string::npos);
  const double waited = std::stod(detail.substr(at + before.size()));
  CHECK(waited >= 3);
  CHECK(waited <= 1e3 * steps.seconds / 2);
  CHECK_THAT(detail, Catch::Contains("rank 0 of 2") && Catch::Contains("waiting after backward"));
  nn::resetProfile(model);
  CHECK(model.profileDetail(steps).empty());
}

TEST_CASE("a process group refuses a timeout that is not positive and finite", "[distributed]") {
  std::vector<std::string> log;
  MirrorGroup group(log);
  group.setTimeoutSeconds(2.5);
  CHECK(group.timeoutSeconds() == 2.5);
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(group.setTimeoutSeconds(bad),
                      Catch::Contains("nn.ProcessGroup: expected a positive, finite timeout in seconds, got"));
  }
  CHECK(group.timeoutSeconds() == 2.5);
}

TEST_CASE("NoSync: micro-batches accumulate without a collective, and the synced one sums them all", "[distributed]") {
  std::vector<std::string> log;
  auto net = [&log] {
    nn::manualSeed(2);
    return std::make_shared<nn::Sequential>(
        std::vector<nn::ModulePtr>{std::make_shared<LoggedLinear>(4, 3, log), nn::make<nn::Tanh>(),
                                   std::make_shared<LoggedLinear>(3, 2, log), nn::make<nn::LogSoftMax>()});
  };
  // One step on a batch of 10, and the same as micro-batches of 4, 4 and 2, each loss scaled by
  // its share of the batch, the first two without summing.
  nn::Generator g(11);
  const Tensor x = Tensor::rand({10, 4}, g);
  const Tensor y = Tensor::fromVector({10}, {0, 1, 0, 1, 1, 0, 0, 1, 1, 0});
  nn::ClassNLLCriterion criterion;
  auto whole = net();
  whole->zeroGradParameters();
  criterion.forward(whole->forward(x), y);
  whole->backward(x, criterion.backward(whole->output, y));
  const std::vector<float> expected = whole->getParameters().second.toVector();

  nn::DistributedDataParallelTable model(net(), std::make_shared<MirrorGroup>(log), bucketsOf(8));
  log.clear();
  model.zeroGradParameters();
  const int64_t starts[] = {0, 4, 8}, sizes[] = {4, 4, 2};
  for (int k = 0; k < 3; ++k) {
    const Tensor xk = x.narrow(0, starts[k], sizes[k]), yk = y.narrow(0, starts[k], sizes[k]);
    std::unique_ptr<nn::NoSync<nn::DistributedDataParallelTable>> noSync =
        k < 2 ? std::make_unique<nn::NoSync<nn::DistributedDataParallelTable>>(model) : nullptr;
    criterion.forward(model.forward(xk), yk);
    model.backward(xk, criterion.backward(model.output, yk), static_cast<float>(sizes[k]) / 10.f);
  }
  CHECK(model.sync());
  CHECK(maxDifference(model.getParameters().second.toVector(), expected) < 1e-6);
  // Sums only in the last backward: the step's check and the three buckets, where summing each
  // micro-batch would have made three times as many.
  const auto sums = std::count_if(log.begin(), log.end(), [](const std::string& s) { return s.rfind("sum ", 0) == 0; });
  CHECK(sums == 4);
  CHECK(log.front() == "gradients of nn.Linear(3 -> 2)");  // the first micro-batch's: no check before it
}

// The compute threads of a CPU device (nn/runtime/ComputeThreads.h): how work is cut into parts, that each
// part runs once and failures come back, and that every module that cuts its work gives with
// several threads what it gives with one.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "examples/LeNet.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/nn.h"
#include "nn/runtime/WorkerThreads.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

// Sets the compute threads for one test and puts back one thread after it.
struct ThreadsForTest {
  explicit ThreadsForTest(int threads) { nn::setNumThreads(threads); }
  ~ThreadsForTest() { nn::setNumThreads(1); }
};

// The outputs and gradients of one forward and backward of `module` on `input`.
struct Pass {
  Tensor output, gradInput;
  std::vector<Tensor> gradients;
};

Pass runPass(nn::Module& module, const Tensor& input, int threads) {
  ThreadsForTest guard(threads);
  module.zeroGradParameters();
  Pass pass;
  pass.output = module.forward(input).clone();
  const Tensor gradOutput = nn::test::randomTensor(pass.output.sizes(), 7);
  pass.gradInput = module.backward(input, gradOutput, 0.5f).clone();
  for (const Tensor& g : module.parameters().second) pass.gradients.push_back(g.clone());
  return pass;
}

// One thread against three (more parts than this machine's cores, and parts of unequal size):
// outputs and gradInput exactly, where each is written by one part, unless OpenBLAS computes them
// (`resultTolerance`: it may round a product of fewer rows or columns differently); the parameter
// gradients, whose parts are summed in part order, within float rounding (`tolerance`) unless
// `exact`.
void checkThreadsAgree(nn::Module& module, const Tensor& input, bool exact, double tolerance = 1e-5,
                       double resultTolerance = 0) {
  const Pass one = runPass(module, input, 1);
  const Pass three = runPass(module, input, 3);
  CHECK(nn::test::maxAbsDiff(three.output, one.output) <= resultTolerance);
  CHECK(nn::test::maxAbsDiff(three.gradInput, one.gradInput) <= resultTolerance);
  REQUIRE(three.gradients.size() == one.gradients.size());
  for (size_t i = 0; i < one.gradients.size(); ++i) {
    if (exact)
      CHECK(nn::test::maxAbsDiff(three.gradients[i], one.gradients[i]) == 0.0);
    else
      CHECK(nn::test::maxAbsDiff(three.gradients[i], one.gradients[i]) <= tolerance);
  }
}

}  // namespace

TEST_CASE("partRange cuts rows into parts whose sizes differ by at most one, the larger first", "[parallel]") {
  // 10 rows in 3 parts: 4 + 3 + 3.
  CHECK(nn::partRange(10, 3, 0).begin == 0);
  CHECK(nn::partRange(10, 3, 0).end == 4);
  CHECK(nn::partRange(10, 3, 1).begin == 4);
  CHECK(nn::partRange(10, 3, 1).end == 7);
  CHECK(nn::partRange(10, 3, 2).begin == 7);
  CHECK(nn::partRange(10, 3, 2).end == 10);
  // 2 rows in 1 part: all of them.
  CHECK(nn::partRange(2, 1, 0).end == 2);
}

TEST_CASE("parallelParts follows the compute threads, at most the work, on CPU devices only", "[parallel]") {
  CHECK(nn::parallelParts(Device::cpu(0), 100) == 1);
  ThreadsForTest guard(4);
  CHECK(nn::numThreads() == 4);
  CHECK(nn::parallelParts(Device::cpu(0), 100) == 4);
  CHECK(nn::parallelParts(Device::cpu(1), 3) == 3);
  CHECK(nn::parallelParts(Device::cpu(0), 0) == 1);
  CHECK(nn::parallelParts(Device(nn::DeviceType::CUDA, 0), 100) == 1);
  CHECK_THROWS_WITH(nn::setNumThreads(0), Contains("expected 1 to 256 threads per device, got 0"));
  CHECK_THROWS_WITH(nn::setNumThreads(100000), Contains("expected 1 to 256 threads per device, got 100000"));
  CHECK(nn::numThreads() == 4);
}

TEST_CASE("parallelFor runs each part once, part 0 on the calling thread, the rest on other threads", "[parallel]") {
  ThreadsForTest guard(3);
  for (int round = 0; round < 50; ++round) {
    std::mutex mutex;
    std::vector<int> runs(3, 0);
    std::set<std::thread::id> threads;
    std::thread::id first;
    nn::parallelFor(Device::cpu(0), 3, [&](int p) {
      std::lock_guard<std::mutex> lock(mutex);
      ++runs[static_cast<size_t>(p)];
      threads.insert(std::this_thread::get_id());
      if (p == 0) first = std::this_thread::get_id();
    });
    REQUIRE(runs == std::vector<int>{1, 1, 1});
    REQUIRE(threads.size() == 3);
    REQUIRE(first == std::this_thread::get_id());
  }
}

TEST_CASE("parallelFor rethrows the first failure in part order and stays usable", "[parallel]") {
  ThreadsForTest guard(3);
  CHECK_THROWS_WITH(nn::parallelFor(Device::cpu(0), 3,
                                    [](int p) {
                                      if (p >= 1) throw std::runtime_error("part " + std::to_string(p) + " failed");
                                    }),
                    "part 1 failed");
  CHECK_THROWS_WITH(nn::parallelFor(Device::cpu(0), 3,
                                    [](int p) {
                                      if (p == 0) throw std::runtime_error("part 0 failed");
                                    }),
                    "part 0 failed");
  std::vector<int> runs(3, 0);
  nn::parallelFor(Device::cpu(0), 3, [&](int p) { ++runs[static_cast<size_t>(p)]; });
  CHECK(runs == std::vector<int>{1, 1, 1});
}

TEST_CASE("parallelFor inside a part runs its parts on that part's thread", "[parallel]") {
  ThreadsForTest guard(2);
  // Recorded on the workers and checked here: Catch's assertions are for the test's own thread.
  std::vector<int> inner(4, 0);
  std::vector<int> onOwnThread(4, 0);
  std::vector<std::thread::id> outerThread(2);
  nn::parallelFor(Device::cpu(0), 2, [&](int p) {
    const std::thread::id self = std::this_thread::get_id();
    outerThread[static_cast<size_t>(p)] = self;
    nn::parallelFor(Device::cpu(0), 2, [&](int q) {
      onOwnThread[static_cast<size_t>(2 * p + q)] = std::this_thread::get_id() == self;
      ++inner[static_cast<size_t>(2 * p + q)];
    });
  });
  CHECK(inner == std::vector<int>{1, 1, 1, 1});
  CHECK(onOwnThread == std::vector<int>{1, 1, 1, 1});
  CHECK(outerThread[0] != outerThread[1]);
}

namespace {

// Lends threads of its own: part 0 on the caller's thread, each other part on a new thread; the
// first failure in part order is rethrown. Counts its calls and records which thread ran each part.
struct TestLender final : nn::ScopedLentThreads::Lender {
  void runParts(int parts, nn::FunctionRef<void(int)> part) override {
    ++calls;
    lastParts = parts;
    threadOf.assign(static_cast<size_t>(parts), std::thread::id());
    std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
    auto run = [&](int p) {
      threadOf[static_cast<size_t>(p)] = std::this_thread::get_id();
      try {
        part(p);
      } catch (...) {
        errors[static_cast<size_t>(p)] = std::current_exception();
      }
    };
    std::vector<std::thread> others;
    for (int p = 1; p < parts; ++p) others.emplace_back(run, p);
    run(0);
    for (std::thread& t : others) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  int calls = 0, lastParts = 0;
  std::vector<std::thread::id> threadOf;
};

}  // namespace

TEST_CASE("lent threads run this thread's parts on their device, and only there", "[parallel]") {
  const Device cpu0 = Device::cpu(0), cpu1 = Device::cpu(1);
  TestLender lender;
  REQUIRE(nn::parallelParts(cpu0, 100) == 1);
  {
    nn::ScopedLentThreads lent(cpu0, 3, lender);
    CHECK(nn::parallelParts(cpu0, 100) == 3);
    CHECK(nn::parallelParts(cpu0, 2) == 2);
    CHECK(nn::parallelParts(cpu1, 100) == 1);
    CHECK(nn::parallelParts(Device(nn::DeviceType::CUDA, 0), 100) == 1);
    int otherThreadParts = 0;
    std::thread([&] { otherThreadParts = nn::parallelParts(cpu0, 100); }).join();
    CHECK(otherThreadParts == 1);

    std::vector<int> runs(3, 0);
    std::vector<int> nestedParts(3, 0);
    nn::parallelFor(cpu0, 3, [&](int p) {
      ++runs[static_cast<size_t>(p)];
      // Inside a lent part the lent threads are busy: a nested call runs its parts here.
      nestedParts[static_cast<size_t>(p)] = nn::parallelParts(cpu0, 100);
      nn::parallelFor(cpu0, 2, [](int) {});
    });
    CHECK(runs == std::vector<int>{1, 1, 1});
    CHECK(lender.calls == 1);
    CHECK(lender.lastParts == 3);
    CHECK(lender.threadOf[0] == std::this_thread::get_id());
    CHECK(std::set<std::thread::id>(lender.threadOf.begin(), lender.threadOf.end()).size() == 3);
    CHECK(nestedParts == std::vector<int>{1, 1, 1});

    // More parts than lent threads: the device's own compute threads take them, as without.
    {
      ThreadsForTest guard(4);
      CHECK(nn::parallelParts(cpu0, 100) == 4);
      nn::parallelFor(cpu0, 4, [](int) {});
      CHECK(lender.calls == 1);
    }
    {
      nn::ScopedLentThreads none;
      CHECK(nn::parallelParts(cpu0, 100) == 1);
      nn::parallelFor(cpu0, 2, [](int) {});
      CHECK(lender.calls == 1);
    }
    nn::parallelFor(cpu0, 2, [](int) {});
    CHECK(lender.calls == 2);
    CHECK(lender.lastParts == 2);
    CHECK_THROWS_WITH(nn::parallelFor(cpu0, 2,
                                      [](int p) {
                                        if (p == 1) throw std::runtime_error("lent part 1 failed");
                                      }),
                      "lent part 1 failed");
    nn::parallelFor(cpu0, 2, [](int) {});  // usable after a failure
    CHECK(lender.calls == 4);
  }
  CHECK(nn::parallelParts(cpu0, 100) == 1);
  nn::ScopedLentThreads one(cpu0, 1, lender);
  CHECK(nn::parallelParts(cpu0, 100) == 1);
  nn::ScopedLentThreads onCuda(Device(nn::DeviceType::CUDA, 0), 3, lender);
  CHECK(nn::parallelParts(Device(nn::DeviceType::CUDA, 0), 100) == 1);
}

TEST_CASE("modules give with three compute threads what they give with one", "[parallel]") {
  SECTION("SpatialConvolution, padded and strided, odd batch") {
    nn::manualSeed(3);
    nn::SpatialConvolution conv(3, 5, 3, 3, 2, 1, 1, 1);
    checkThreadsAgree(conv, nn::test::randomTensor({7, 3, 9, 8}, 1), false);
  }
  SECTION("SpatialConvolution as LeNet's second layer") {
    nn::manualSeed(3);
    nn::SpatialConvolution conv(20, 50, 5, 5);
    checkThreadsAgree(conv, nn::test::randomTensor({5, 20, 12, 12}, 2), false);
  }
  SECTION("Linear below a training batch: OpenBLAS's products, cut by rows or columns of their results") {
    // Each element is written by one part, but OpenBLAS may round a product of fewer rows or
    // columns differently (its AMD Zen kernels do), so all is compared to float rounding.
    nn::manualSeed(3);
    nn::Linear linear(37, 23);
    const nn::test::RouteWatch blas(nn::cpu::Route::linearBlas);
    checkThreadsAgree(linear, nn::test::randomTensor({11, 37}, 3), false, 1e-6, 1e-6);
    CHECK(blas.ran(nn::cpu::Pass::gradInput) == 2);
  }
  SECTION("SpatialMaxPooling, disjoint and overlapping windows") {
    nn::SpatialMaxPooling disjoint(2, 2, 2, 2);
    checkThreadsAgree(disjoint, nn::test::randomTensor({3, 5, 8, 10}, 4), true);
    nn::SpatialMaxPooling overlapping(3, 3, 2, 2, 1, 1);
    checkThreadsAgree(overlapping, nn::test::randomTensor({3, 5, 9, 7}, 5), true);
  }
  SECTION("SpatialBatchNormalization: each feature's statistics and gradients summed by one part") {
    nn::manualSeed(3);
    nn::SpatialBatchNormalization bn(5);
    checkThreadsAgree(bn, nn::test::randomTensor({4, 5, 7, 9}, 8), true);
  }
  SECTION("ReLU in place and Tanh over more elements than one part takes") {
    nn::ReLU relu(true);
    Tensor a = nn::test::randomTensor({3, 40000}, 6);
    checkThreadsAgree(relu, a.clone(), true);
    nn::Tanh tanh;
    checkThreadsAgree(tanh, a, true);
  }
}

TEST_CASE("Linear at a training batch gives with three compute threads what it gives with one", "[parallel]") {
  // The direct route's tiles (and the narrow route's loops): each output and gradInput element
  // one chain of sums, written by one part.
  NN_REQUIRE_ISA(nn::cpu::Isa::avx2);
  for (int64_t out : {40, 7}) {
    CAPTURE(out);
    nn::manualSeed(3);
    nn::Linear linear(37, out);
    const nn::test::RouteWatch route(out > 16 ? nn::cpu::Route::linearDirect : nn::cpu::Route::linearNarrow);
    checkThreadsAgree(linear, nn::test::randomTensor({20, 37}, 3), out <= 16, 1e-6);
    CHECK(route.ran(nn::cpu::Pass::forward) == 2);
    CHECK(route.ran(nn::cpu::Pass::gradInput) == 2);
  }
}

TEST_CASE("SGD steps over parts give what one thread gives", "[parallel]") {
  // The same parameters and gradients stepped three times, with momentum, on one and on two
  // compute threads: each element is updated by one part with the same formula.
  auto train = [](int threads) {
    ThreadsForTest guard(threads);
    Tensor values = nn::test::randomTensor({60000}, 8);
    const Tensor gradients = nn::test::randomTensor({60000}, 9);
    nn::SgdOptions options;
    options.learningRate = 0.1f;
    options.momentum = 0.9f;
    nn::SGD sgd(std::make_pair(values, gradients), options);
    for (int step = 0; step < 3; ++step) sgd.step();
    return values;
  };
  const Tensor one = train(1);
  CHECK(nn::test::maxAbsDiff(one, nn::test::randomTensor({60000}, 8)) > 0.1);
  CHECK(nn::test::maxAbsDiff(train(2), one) == 0.0);
}

TEST_CASE("LeNet trains on two compute threads as on one, to float rounding", "[parallel]") {
  auto lossesOf = [](int threads) {
    ThreadsForTest guard(threads);
    nn::manualSeed(1);
    auto net = examples::lenet();
    nn::ClassNLLCriterion criterion;
    nn::SgdOptions options;
    options.learningRate = 0.05f;
    options.momentum = 0.9f;
    nn::SGD sgd(net->getParameters(), options);
    const Tensor images = nn::test::randomTensor({32, 1, 28, 28}, 9);
    std::vector<float> labels(32);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 10);
    const Tensor targets = Tensor::fromVector({32}, labels);
    std::vector<float> losses;
    for (int step = 0; step < 5; ++step) {
      net->zeroGradParameters();
      const Tensor& out = net->forward(images);
      losses.push_back(criterion.forward(out, targets));
      net->backward(images, criterion.backward(out, targets));
      sgd.step();
    }
    return losses;
  };
  const std::vector<float> one = lossesOf(1), two = lossesOf(2);
  REQUIRE(one.size() == two.size());
  CHECK(one.back() < one.front());  // it learns
  // Only the convolutions' weight gradients are summed in another order (part by part); over five
  // steps that moves a loss by a few float32 roundings at most (equal on the build machine), far
  // below 1e-6 of it.
  for (size_t i = 0; i < one.size(); ++i) CHECK(two[i] == Approx(one[i]).epsilon(1e-6).margin(0));
}

TEST_CASE("a worker thread the system cannot start is an nn::Error, with the others joined",
          "[parallel][nosanitizer][noemulator]") {
  // In a child process whose address space leaves room for a few thread stacks only (a limit
  // that holds for root too), asking for 200 workers must end in an error, not in a hang or a
  // crash; an alarm ends a hung child.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(20);
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    std::ifstream status("/proc/self/statm");
    size_t pages = 0;
    status >> pages;
    limit.rlim_cur = pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) + (size_t{64} << 20);
    setrlimit(RLIMIT_AS, &limit);
    try {
      nn::WorkerThreads workers(200);
      _exit(2);  // every thread started: the limit did not bite
    } catch (const nn::Error& e) {
      const std::string message = e.what();
      _exit(message.find("cannot start thread") != std::string::npos && message.find("of 200") != std::string::npos
                ? 0
                : 3);
    } catch (...) {
      _exit(4);
    }
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  INFO("child status " << status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

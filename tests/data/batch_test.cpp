// nn::BatchIterator: seeded order, every sample once per epoch, partial batches, restore; data
// sets of one's own, transforms, and the background thread.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nn/data/BatchIterator.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"

using nn::BatchIterator;
using nn::BatchOptions;
using nn::Tensor;

namespace {

// Sample i has input row [i, 100 + i] and target i, so a batch shows which samples it holds
// and whether input and target rows stayed paired.
struct Data {
  explicit Data(int64_t n) : inputs(Tensor::empty({n, 2})), targets(Tensor::empty({n})) {
    for (int64_t i = 0; i < n; ++i) {
      inputs.data()[2 * i] = static_cast<float>(i);
      inputs.data()[2 * i + 1] = static_cast<float>(100 + i);
      targets.data()[i] = static_cast<float>(i);
    }
  }
  Tensor inputs;
  Tensor targets;
};

// The samples of one batch, checking that inputs and targets agree.
std::vector<int64_t> samplesOf(const Tensor& input, const Tensor& target) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < target.size(0); ++i) {
    const auto s = static_cast<int64_t>(target.at({i}));
    REQUIRE(input.at({i, 0}) == static_cast<float>(s));
    REQUIRE(input.at({i, 1}) == static_cast<float>(100 + s));
    out.push_back(s);
  }
  return out;
}

// The batches of one epoch, each as its samples.
std::vector<std::vector<int64_t>> epochOf(BatchIterator& it) {
  std::vector<std::vector<int64_t>> batches;
  while (it.next()) batches.push_back(samplesOf(it.input, it.target));
  return batches;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

TEST_CASE("BatchIterator gives every sample once per epoch and keeps the last partial batch", "[BatchIterator]") {
  Data data(10);
  BatchIterator it(data.inputs, data.targets, 4, BatchOptions{true, false, 7});
  REQUIRE(it.batchesPerEpoch() == 3);
  std::vector<int64_t> previous;
  for (int epoch = 0; epoch < 3; ++epoch) {
    REQUIRE(it.epoch() == epoch);
    const auto batches = epochOf(it);
    REQUIRE(batches.size() == 3);
    REQUIRE(batches[0].size() == 4);
    REQUIRE(batches[1].size() == 4);
    REQUIRE(batches[2].size() == 2);
    REQUIRE(it.input.sizes() == std::vector<int64_t>{2, 2});  // the call that ends the epoch fills nothing
    std::vector<int64_t> order = flatten(batches);
    REQUIRE(order != previous);  // a new order each epoch
    previous = order;
    std::sort(order.begin(), order.end());
    REQUIRE(order == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  }
  REQUIRE(it.epoch() == 3);
}

TEST_CASE("BatchIterator drops the last partial batch on request", "[BatchIterator]") {
  Data data(10);
  BatchIterator it(data.inputs, data.targets, 4, BatchOptions{true, true, 7});
  REQUIRE(it.batchesPerEpoch() == 2);
  const auto batches = epochOf(it);
  REQUIRE(batches.size() == 2);
  REQUIRE(batches[0].size() == 4);
  REQUIRE(batches[1].size() == 4);
  REQUIRE(it.epoch() == 1);
  REQUIRE_THROWS_WITH(BatchIterator(data.inputs, data.targets, 11, BatchOptions{true, true, 0}),
                      Catch::Contains("11") && Catch::Contains("10 samples"));
}

TEST_CASE("BatchIterator: the same seed gives the same order, another seed another", "[BatchIterator]") {
  Data data(50);
  BatchIterator a(data.inputs, data.targets, 8, BatchOptions{true, false, 42});
  BatchIterator b(data.inputs, data.targets, 8, BatchOptions{true, false, 42});
  BatchIterator c(data.inputs, data.targets, 8, BatchOptions{true, false, 43});
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto ea = epochOf(a);
    REQUIRE(ea == epochOf(b));
    REQUIRE(ea != epochOf(c));
  }
  BatchIterator plain(data.inputs, data.targets, 8, BatchOptions{false, false, 42});
  std::vector<int64_t> identity(50);
  for (int64_t i = 0; i < 50; ++i) identity[static_cast<size_t>(i)] = i;
  REQUIRE(flatten(epochOf(plain)) == identity);
  REQUIRE(flatten(epochOf(plain)) == identity);
}

TEST_CASE("BatchIterator's shuffle makes every order of three samples equally likely", "[BatchIterator]") {
  // 24,000 epochs over 3 samples: each of the 6 orders should come 4,000 times. Pearson's
  // chi-squared over the 6 counts (5 degrees of freedom) exceeds 30 with probability 1.5e-5 for
  // a uniform shuffle. A biased one (swapping each position with any position: 27 equally likely
  // ways, 3 orders 5/27 of the time and 3 orders 4/27) gives 24,000 / 81 = 296 on average, with
  // a standard deviation of about 35: it cannot pass.
  constexpr int kEpochs = 24000;
  Data data(3);
  BatchIterator it(data.inputs, data.targets, 3, BatchOptions{true, false, 5});
  std::map<std::vector<int64_t>, int> counts;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    ++counts[it.permutation()];
    while (it.next()) {
    }
  }
  REQUIRE(counts.size() == 6);
  const double expected = kEpochs / 6.0;
  double chiSquared = 0;
  std::ostringstream seen;
  for (const auto& [order, count] : counts) {
    seen << order[0] << order[1] << order[2] << ": " << count << "  ";
    chiSquared += (count - expected) * (count - expected) / expected;
  }
  INFO(seen.str());
  REQUIRE(chiSquared < 30);
}

TEST_CASE("BatchIterator allocates nothing once the batch tensors have their size", "[BatchIterator]") {
  Data data(10);
  BatchIterator it(data.inputs, data.targets, 4);
  Tensor x, y;
  REQUIRE(it.next(x, y));
  const int64_t before = nn::storageAllocationCount();
  int batches = 0;
  for (int epoch = 0; epoch < 3; ++epoch)
    while (it.next(x, y)) ++batches;
  REQUIRE(batches == 2 + 3 + 3);
  REQUIRE(nn::storageAllocationCount() == before);
}

TEST_CASE("BatchIterator restored from epoch, position and permutation continues identically", "[BatchIterator]") {
  Data data(10);
  const BatchOptions options{true, false, 9};
  BatchIterator original(data.inputs, data.targets, 3, options);
  epochOf(original);
  REQUIRE(original.next());
  const int64_t epoch = original.epoch();
  const int64_t position = original.position();
  const std::vector<int64_t> permutation = original.permutation();
  REQUIRE(epoch == 1);
  REQUIRE(position == 3);

  BatchIterator resumed(data.inputs, data.targets, 3, options);
  resumed.restore(epoch, position, permutation);
  for (int e = 0; e < 2; ++e) REQUIRE(epochOf(resumed) == epochOf(original));

  REQUIRE_THROWS_WITH(resumed.restore(0, 11, permutation), Catch::Contains("position 11"));
  REQUIRE_THROWS_WITH(resumed.restore(0, 0, {0, 1, 2}),
                      Catch::Contains("permutation of 10") && Catch::Contains("got 3"));
  std::vector<int64_t> repeated = permutation;
  repeated[0] = repeated[1];
  REQUIRE_THROWS_WITH(resumed.restore(0, 0, repeated), Catch::Contains("repeats"));
}

TEST_CASE("BatchIterator refuses to restore an epoch past its last, and ends there with an error, not a wrap",
          "[BatchIterator]") {
  Data data(5);
  for (bool background : {false, true}) {
    CAPTURE(background);
    BatchOptions options{true, false, 3};
    options.background = background;
    BatchIterator it(data.inputs, data.targets, 2, options);
    const std::vector<int64_t> permutation = it.permutation();
    // INT64_MAX was accepted, and the next epoch was INT64_MIN.
    for (int64_t epoch : {INT64_MAX, BatchIterator::kMaxEpoch + 1, int64_t{-1}})
      CHECK_THROWS_WITH(it.restore(epoch, 0, permutation), Catch::Contains("expected epoch from 0 to 2147483647") &&
                                                               Catch::Contains("got epoch " + std::to_string(epoch)));
    CHECK(it.epoch() == 0);
    // The last epoch runs; moving past it is an error, every time, and the epoch stays.
    it.restore(BatchIterator::kMaxEpoch, 2, permutation);
    CHECK(it.next());
    CHECK(it.next());
    CHECK_THROWS_WITH(it.next(), Catch::Contains("epoch 2147483647 is the last it counts"));
    CHECK_THROWS_WITH(it.next(), Catch::Contains("epoch 2147483647 is the last it counts"));
    CHECK(it.epoch() == BatchIterator::kMaxEpoch);
  }
}

TEST_CASE("BatchIterator's dropLast error names the data set's size and the batch's, each as what it is",
          "[BatchIterator]") {
  Data data(7);
  // It said "a partial batch of size 1000 leaves no batch of 7 samples".
  CHECK_THROWS_WITH(BatchIterator(data.inputs, data.targets, 1000, BatchOptions{true, true, 0}),
                    Catch::Contains("a data set of 7 samples has no full batch of 1000"));
  BatchOptions sharded{true, true, 0};
  sharded.shards = 2;
  CHECK_THROWS_WITH(BatchIterator(data.inputs, data.targets, 4, sharded),
                    Catch::Contains("a data set of 7 samples has no full batch of 8 (batch size 4 x 2 shards)"));
}

TEST_CASE("BatchIterator rejects mismatched data and a non-positive batch size", "[BatchIterator]") {
  Data data(10);
  REQUIRE_THROWS_WITH(BatchIterator(data.inputs, Tensor::zeros({9}), 4),
                      Catch::Contains("[10, 2]") && Catch::Contains("[9]"));
  REQUIRE_THROWS_WITH(BatchIterator(data.inputs, data.targets, 0), Catch::Contains("batch size, got 0"));
  // A global batch (batch size x shards) beyond int64 overflowed, then divided by zero.
  BatchOptions sharded;
  sharded.shards = 2;
  for (int64_t batchSize : {int64_t{1} << 62, std::numeric_limits<int64_t>::max()})
    REQUIRE_THROWS_WITH(BatchIterator(data.inputs, data.targets, batchSize, sharded),
                        Catch::Contains("in each of 2 shards is beyond a tensor's size"));
}

namespace {

// A data set of one's own: sample i has input [i, 100 + i] and target i, as Data's, made on
// demand; get() throws for sample `failing` (none by default) and counts its calls.
class Numbers : public nn::Dataset {
 public:
  explicit Numbers(int64_t n, int64_t failing = -1) : n_(n), failing_(failing) {}
  int64_t size() const override { return n_; }
  std::vector<int64_t> inputSizes() const override { return {2}; }
  std::vector<int64_t> targetSizes() const override { return {}; }
  void get(int64_t index, float* input, float* target) const override {
    ++calls;
    if (index == failing_) throw nn::Error("Numbers: sample " + std::to_string(index) + " is unreadable");
    input[0] = static_cast<float>(index);
    input[1] = static_cast<float>(100 + index);
    target[0] = static_cast<float>(index);
  }
  mutable std::atomic<int64_t> calls{0};

 private:
  int64_t n_;
  int64_t failing_;
};

// A transform that adds 1000 * (epoch + 1) + batch to the targets, so that each batch shows
// which (epoch, batch) it was transformed for.
void markTargets(Tensor&, Tensor& target, int64_t epoch, int64_t batch) {
  for (int64_t i = 0; i < target.numel(); ++i) target.data()[i] += static_cast<float>(1000 * (epoch + 1) + batch);
}

// The batches of `epochs` epochs, each as its targets.
std::vector<std::vector<float>> targetsOf(BatchIterator& it, int epochs) {
  std::vector<std::vector<float>> batches;
  for (int e = 0; e < epochs; ++e)
    while (it.next()) batches.push_back(it.target.toVector());
  return batches;
}

}  // namespace

TEST_CASE("BatchIterator over a data set of one's own: get()'s samples in the seeded order", "[BatchIterator]") {
  Data data(10);
  auto numbers = std::make_shared<Numbers>(10);
  BatchIterator own(numbers, 4, BatchOptions{true, false, 7});
  BatchIterator tensors(data.inputs, data.targets, 4, BatchOptions{true, false, 7});
  REQUIRE(own.batchesPerEpoch() == 3);
  REQUIRE(own.next());
  REQUIRE(own.input.sizes() == std::vector<int64_t>{4, 2});
  REQUIRE(own.target.sizes() == std::vector<int64_t>{4});
  REQUIRE(own.input.device() == nn::Device::cpu(0));
  REQUIRE(samplesOf(own.input, own.target) == (tensors.next(), samplesOf(tensors.input, tensors.target)));
  for (int epoch = 0; epoch < 3; ++epoch) REQUIRE(epochOf(own) == epochOf(tensors));
  REQUIRE(numbers->calls == 3 * 10);  // three epochs, each sample once
  REQUIRE_THROWS_WITH(BatchIterator(nullptr, 4), Catch::Contains("nn.BatchIterator: expected a data set"));
  REQUIRE_THROWS_WITH(BatchIterator(std::make_shared<Numbers>(0), 4), Catch::Contains("at least one sample, got 0"));
}

namespace {

// Numbers whose get() may run on several threads at once (concurrentGet), or not: records the
// threads it ran on; samples in `failing` throw.
class ThreadedNumbers : public nn::Dataset {
 public:
  ThreadedNumbers(int64_t n, bool concurrent, std::set<int64_t> failing = {})
      : n_(n), concurrent_(concurrent), failing_(std::move(failing)) {}
  int64_t size() const override { return n_; }
  std::vector<int64_t> inputSizes() const override { return {2}; }
  std::vector<int64_t> targetSizes() const override { return {}; }
  bool concurrentGet() const override { return concurrent_; }
  void get(int64_t index, float* input, float* target) const override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      threads.insert(std::this_thread::get_id());
    }
    if (failing_.count(index)) throw nn::Error("ThreadedNumbers: sample " + std::to_string(index) + " is unreadable");
    input[0] = static_cast<float>(index);
    input[1] = static_cast<float>(100 + index);
    target[0] = static_cast<float>(index);
  }
  mutable std::set<std::thread::id> threads;

 private:
  int64_t n_;
  bool concurrent_;
  std::set<int64_t> failing_;
  mutable std::mutex mutex_;
};

// Two compute threads for one test, one after it.
struct TwoThreads {
  TwoThreads() { nn::setNumThreads(2); }
  ~TwoThreads() { nn::setNumThreads(1); }
};

}  // namespace

TEST_CASE("BatchIterator gathers a batch in parts on the compute threads where the data set allows it",
          "[BatchIterator]") {
  TwoThreads two;
  Data data(200);
  BatchIterator reference(data.inputs, data.targets, 64, BatchOptions{true, false, 5});
  auto concurrent = std::make_shared<ThreadedNumbers>(200, true);
  auto serial = std::make_shared<ThreadedNumbers>(200, false);
  BatchIterator inParts(concurrent, 64, BatchOptions{true, false, 5});
  BatchIterator oneByOne(serial, 64, BatchOptions{true, false, 5});
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto expected = epochOf(reference);
    CHECK(epochOf(inParts) == expected);
    CHECK(epochOf(oneByOne) == expected);
  }
  // Two threads for the data set that allows it, the caller's alone for the other.
  CHECK(concurrent->threads.size() == 2);
  CHECK(concurrent->threads.count(std::this_thread::get_id()) == 1);
  CHECK(serial->threads == std::set<std::thread::id>{std::this_thread::get_id()});
  // A background thread gathers alone: its parts would take the caller's compute threads.
  auto behind = std::make_shared<ThreadedNumbers>(200, true);
  BatchOptions options{true, false, 5};
  options.background = true;
  BatchIterator background(behind, 64, options);
  BatchIterator fromTheStart(data.inputs, data.targets, 64, BatchOptions{true, false, 5});
  CHECK(epochOf(background) == epochOf(fromTheStart));
  CHECK(behind->threads.size() == 1);
  CHECK(behind->threads.count(std::this_thread::get_id()) == 0);
  // Samples 20 and 50 fail, in the two parts of the first batch: the first one's error comes back.
  BatchIterator failing(std::make_shared<ThreadedNumbers>(200, true, std::set<int64_t>{20, 50}), 64,
                        BatchOptions{false, false, 5});
  CHECK_THROWS_WITH(failing.next(), "ThreadedNumbers: sample 20 is unreadable");
}

TEST_CASE("BatchIterator's background thread gives the batches and transforms of the calling thread's",
          "[BatchIterator]") {
  for (const bool dropLast : {false, true}) {
    INFO("dropLast " << dropLast);
    BatchOptions options{true, dropLast, 11};
    options.transform = markTargets;
    BatchIterator here(std::make_shared<Numbers>(10), 3, options);
    options.background = true;
    BatchIterator behind(std::make_shared<Numbers>(10), 3, options);
    const auto expected = targetsOf(here, 3);
    REQUIRE(targetsOf(behind, 3) == expected);
    REQUIRE(behind.epoch() == 3);
    REQUIRE(behind.position() == 0);
    REQUIRE(behind.permutation() == here.permutation());
    // The transform saw (epoch, batch): epoch 0's second batch is marked 1001, epoch 2's first 3000.
    REQUIRE(expected[1][0] >= 1001);
    REQUIRE(expected[1][0] < 1011);
    const size_t perEpoch = dropLast ? 3 : 4;
    REQUIRE(expected[2 * perEpoch][0] >= 3000);
    REQUIRE(expected[2 * perEpoch][0] < 3010);
  }
}

TEST_CASE("BatchIterator with a background thread restores, and stops with batches prepared ahead", "[BatchIterator]") {
  Data data(10);
  BatchOptions options{true, false, 9};
  options.background = true;
  options.transform = markTargets;
  BatchIterator original(data.inputs, data.targets, 3, options);
  targetsOf(original, 1);
  REQUIRE(original.next());
  REQUIRE(original.position() == 3);  // given out, not prepared ahead
  BatchIterator resumed(data.inputs, data.targets, 3, options);
  REQUIRE(resumed.next());  // the thread runs and prepares ahead; restore drops what it prepared
  resumed.restore(original.epoch(), original.position(), original.permutation());
  REQUIRE(targetsOf(resumed, 2) == targetsOf(original, 2));
  // Both slots full and the thread waiting: the destructors end it.
  REQUIRE(resumed.next());
  REQUIRE(original.next());
}

TEST_CASE("BatchIterator: what get() throws reaches next(), on the background thread too", "[BatchIterator]") {
  for (const bool background : {false, true}) {
    INFO("background " << background);
    BatchOptions options{false, false, 0};
    options.background = background;
    BatchIterator it(std::make_shared<Numbers>(10, 5), 4, options);
    REQUIRE(it.next());
    REQUIRE_THROWS_WITH(it.next(), Catch::Contains("Numbers: sample 5 is unreadable"));
    REQUIRE_THROWS_WITH(it.next(), Catch::Contains("Numbers: sample 5 is unreadable"));
    REQUIRE(it.position() == 4);
  }
}

TEST_CASE("BatchIterator with a background thread and a transform allocates nothing once the batches have their size",
          "[BatchIterator]") {
  Data data(10);
  BatchOptions options{true, false, 3};
  options.background = true;
  options.transform = markTargets;
  BatchIterator it(data.inputs, data.targets, 4, options);
  Tensor x, y;
  REQUIRE(it.next(x, y));
  REQUIRE(it.next(x, y));  // both slots have held a full batch
  const int64_t before = nn::storageAllocationCount();
  int batches = 0;
  for (int epoch = 0; epoch < 3; ++epoch)
    while (it.next(x, y)) ++batches;
  REQUIRE(batches == 1 + 3 + 3);
  REQUIRE(nn::storageAllocationCount() == before);
}

TEST_CASE("BatchIterator's shards split each global batch evenly and cover the epoch once", "[BatchIterator]") {
  // 11 samples, 3 shards of 2: global batches of 6, then 5 (shares 2, 2, 1).
  Data data(11);
  BatchIterator whole(data.inputs, data.targets, 6, BatchOptions{true, false, 5});
  std::vector<std::unique_ptr<BatchIterator>> shards;
  for (int s = 0; s < 3; ++s) {
    BatchOptions options{true, false, 5};
    options.shard = s;
    options.shards = 3;
    options.background = s == 1;  // the same with or without the thread
    shards.push_back(std::make_unique<BatchIterator>(data.inputs, data.targets, 2, options));
  }
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto global = epochOf(whole);
    REQUIRE(global.size() == 2);
    std::vector<std::vector<std::vector<int64_t>>> parts;
    for (auto& shard : shards) {
      REQUIRE(shard->batchesPerEpoch() == 2);
      parts.push_back(epochOf(*shard));
      REQUIRE(shard->epoch() == epoch + 1);
    }
    for (size_t b = 0; b < 2; ++b) {
      std::vector<int64_t> joined;
      for (const auto& part : parts) joined.insert(joined.end(), part[b].begin(), part[b].end());
      REQUIRE(joined == global[b]);  // shard s holds its consecutive share of the global batch
    }
    REQUIRE(parts[0][1].size() == 2);
    REQUIRE(parts[1][1].size() == 2);
    REQUIRE(parts[2][1].size() == 1);
  }
  // A last global batch of fewer samples than shards is dropped: 7 samples, 3 shards of 2.
  BatchOptions options{false, false, 0};
  options.shards = 3;
  BatchIterator few(Data(7).inputs, Data(7).targets, 2, options);
  REQUIRE(few.batchesPerEpoch() == 1);
  REQUIRE(epochOf(few).size() == 1);
  options.shard = 3;
  REQUIRE_THROWS_WITH(BatchIterator(data.inputs, data.targets, 2, options),
                      Catch::Contains("expected shard 0 .. shards - 1 of shards > 0, got shard 3 of 3"));
}

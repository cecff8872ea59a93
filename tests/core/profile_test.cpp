// The per-module time profile (nn/core/Profiler.h): what containers record, its table, and that it
// stays off unless asked for.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cunn/cunn.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Profiling.h"

using nn::Tensor;
using nn::test::profileRow;
using nn::test::ProfilingOn;

namespace {

// Linear(64 -> 128), ReLU, Sequential(Linear(128 -> 10)), LogSoftMax: large enough that every
// pass takes a measurable time, with a container inside the container.
std::shared_ptr<nn::Sequential> smallNet() {
  nn::manualSeed(1);
  auto inner = std::make_shared<nn::Sequential>();
  inner->add(std::make_shared<nn::Linear>(128, 10));
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(64, 128))
      .add(std::make_shared<nn::ReLU>())
      .add(inner)
      .add(std::make_shared<nn::LogSoftMax>());
  return net;
}

// `forwards` forward passes, the last `backwards` of them followed by a backward pass.
void run(nn::Module& net, int forwards, int backwards, int64_t rows = 32) {
  const Tensor x = nn::test::randomTensor({rows, 64}, 2);
  const Tensor gradOutput = nn::test::randomTensor({rows, 10}, 3);
  for (int i = 0; i < forwards; ++i) {
    net.forward(x);
    if (i >= forwards - backwards) net.backward(x, gradOutput);
  }
}

}  // namespace

TEST_CASE("the profile records every module below a Sequential, with times and call counts", "[profile]") {
  auto net = smallNet();
  ProfilingOn on;
  run(*net, 5, 3);
  std::vector<nn::ModulePtr> modules = net->listModules();
  modules.erase(modules.begin());  // the root: no container runs it
  REQUIRE(modules.size() == 5);
  for (const nn::ModulePtr& m : modules) {
    INFO(m->typeName());
    CHECK(m->profile.forward.calls == 5);
    CHECK(m->profile.gradInput.calls == 3);
    CHECK(m->profile.gradParameters.calls == 3);
    CHECK(m->profile.forward.seconds > 0);
    CHECK(m->profile.gradInput.seconds > 0);
    CHECK(m->profile.gradParameters.seconds >= 0);
  }
  // Modules with parameters spend measurable time accumulating their gradients.
  CHECK(net->get(0)->profile.gradParameters.seconds > 0);
  // A container's time holds its children's.
  const nn::Module& inner = *net->get(2);
  const nn::Module& innerLinear = *std::static_pointer_cast<nn::Sequential>(net->get(2))->get(0);
  CHECK(inner.profile.forward.seconds >= innerLinear.profile.forward.seconds);
  // The root is not timed by the profile: the caller times the step.
  CHECK(net->profile.forward.calls == 0);

  nn::resetProfile(*net);
  for (const nn::ModulePtr& m : net->listModules()) {
    CHECK(m->profile.forward.calls == 0);
    CHECK(m->profile.forward.seconds == 0);
    CHECK(m->profile.gradInput.calls == 0);
    CHECK(m->profile.gradParameters.calls == 0);
  }
}

TEST_CASE("profiling is off by default and records nothing when off", "[profile]") {
  REQUIRE_FALSE(nn::profilingEnabled());
  auto net = smallNet();
  run(*net, 3, 2);
  for (const nn::ModulePtr& m : net->listModules()) {
    CHECK(m->profile.forward.calls == 0);
    CHECK(m->profile.gradInput.calls == 0);
    CHECK(m->profile.gradParameters.seconds == 0);
  }
}

TEST_CASE("the profile table names every timed module and section, and its shares add up", "[profile]") {
  auto net = smallNet();
  ProfilingOn on;
  nn::PassTime step;
  nn::PassTime sgd{0.001, 4};
  for (int i = 0; i < 4; ++i) {
    nn::ScopedTimer timer(step);
    run(*net, 1, 1);
  }
  REQUIRE(step.calls == 4);
  step.seconds += sgd.seconds;  // as if the SGD step had run inside the step
  const std::string table = nn::profileTable(*net, {{"SGD step", sgd}}, step);
  INFO(table);
  CHECK_THAT(table, Catch::Contains("profile of 4 steps"));
  CHECK_THAT(table, Catch::Contains("(1) nn.Linear(64 -> 128)"));
  CHECK_THAT(table, Catch::Contains("(2) nn.ReLU"));
  CHECK_THAT(table, Catch::Contains("(3) nn.Sequential"));
  CHECK_THAT(table, Catch::Contains("  (1) nn.Linear(128 -> 10)"));  // indented below its container
  CHECK_THAT(table, Catch::Contains("(4) nn.LogSoftMax"));
  CHECK_THAT(table, Catch::Contains("SGD step"));
  CHECK_THAT(table, Catch::Contains("0.250"));  // 1 ms over 4 steps
  CHECK_THAT(table, Catch::Contains("other"));
  CHECK_THAT(table, Catch::Contains("100.0%"));
}

TEST_CASE("below a DataParallelTable the profile records the first replica's modules", "[profile]") {
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(smallNet(), {nn::Device::cpu(0), nn::Device::cpu(1)});
  ProfilingOn on;
  run(*table, 3, 2);
  const nn::Module& replica = *table->children().at(0);
  for (const nn::ModulePtr& m : replica.children()) {
    INFO(m->typeName());
    CHECK(m->profile.forward.calls == 3);
    CHECK(m->profile.gradInput.calls == 2);
    CHECK(m->profile.forward.seconds > 0);
  }
  // Resetting walks the tree without apply(), which would mark the replicas stale.
  table->forward(nn::test::randomTensor({32, 64}, 2));
  REQUIRE_FALSE(table->isStale(1));
  nn::resetProfile(*table);
  CHECK_FALSE(table->isStale(1));
  CHECK(replica.children()[0]->profile.forward.calls == 0);
}

TEST_CASE("a DataParallelTable's profile gives each device thread's task and wait in each part of the step",
          "[profile]") {
  // 22,510 parameters: enough that the broadcast and the reduce spread over the device threads.
  nn::manualSeed(2);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(64, 300))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(300, 10))
      .add(std::make_shared<nn::LogSoftMax>());
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(net, {nn::Device::cpu(0), nn::Device::cpu(1)});
  run(*table, 2, 2);  // warm: no profile yet
  CHECK(table->profileDetail(nn::PassTime{1, 1}).empty());

  ProfilingOn on;
  nn::resetProfile(*table);
  nn::PassTime step;
  // 1,024 rows: the batch's copies take long enough to show in thousandths of a millisecond.
  for (int i = 0; i < 3; ++i) {
    nn::ScopedTimer timer(step);
    run(*table, 1, 1, 1024);
  }
  const std::string detail = table->profileDetail(step);
  INFO(detail);
  CHECK_THAT(detail, Catch::Contains("cpu:0 task") && Catch::Contains("cpu:1 task"));
  // Each part: its rounds, then each device's task and wait; a task lies inside its round.
  for (const char* part : {"broadcast", "forward", "backward", "reduce", "all rounds"}) {
    const std::vector<double> row = profileRow(detail, part);
    INFO(part);
    REQUIRE(row.size() == 5);
    CHECK(row[0] > 0);
    for (size_t device = 0; device < 2; ++device) {
      CHECK(row[1 + 2 * device] > 0);
      CHECK(row[1 + 2 * device] <= row[0] + 0.0015);
    }
  }
  // Part of each device thread's wait went in starting its tasks.
  const std::vector<double> starting = profileRow(detail, "of which starting");
  REQUIRE(starting.size() == 2);
  for (size_t device = 0; device < 2; ++device) {
    CHECK(starting[device] >= 0);
    CHECK(starting[device] <= profileRow(detail, "all rounds")[2 + 2 * device] + 0.0015);
  }
  // A batch on the first device, cut along dimension 0, is scattered by the communicator in one
  // call on the caller's thread (Note [Scatter by the communicator]): the device threads copy
  // nothing, and the caller alone holds that call.
  const std::vector<double> scatters = profileRow(detail, "of which scatters");
  REQUIRE(scatters.size() == 2);
  CHECK(scatters[0] == 0);
  CHECK(scatters[1] == 0);
  const double oneCall = profileRow(detail, "one-call scatters").at(0);
  CHECK(oneCall > 0);
  CHECK(oneCall <= profileRow(detail, "the caller alone").at(0) + 0.0015);
  // The table's calls hold every round, and the step (timed here) holds the calls.
  const double calls = profileRow(detail, "the table's calls").at(0);
  CHECK(calls >= profileRow(detail, "all rounds")[0]);
  CHECK(calls <= 1e3 * step.seconds / 3 + 0.0015);
  // profileTable prints it after the modules' rows; resetProfile clears it.
  CHECK_THAT(nn::profileTable(*table, {}, step), Catch::EndsWith(detail));
  nn::resetProfile(*table);
  CHECK(table->profileDetail(step).empty());

  // A device thread that slept between steps (longer than its 2 ms watch) takes a wake-up to
  // start its first task: the starting part of its wait shows it.
  nn::resetProfile(*table);
  nn::PassTime slept;
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    nn::ScopedTimer timer(slept);
    run(*table, 1, 1, 1024);
  }
  const std::vector<double> woken = profileRow(table->profileDetail(slept), "of which starting");
  REQUIRE(woken.size() == 2);
  for (size_t device = 0; device < 2; ++device) CHECK(woken[device] > 0);
  nn::resetProfile(*table);

  // A batch elsewhere (here on cpu:1) is copied by each device's thread, its own slice, inside
  // the round: a part of the forward task (and of backward's, for gradOutput on cpu:1).
  const Tensor x = nn::test::randomTensor({1024, 64}, 2).to(nn::Device::cpu(1));
  const Tensor gradOutput = nn::test::randomTensor({1024, 10}, 3).to(nn::Device::cpu(1));
  step = nn::PassTime();
  for (int i = 0; i < 3; ++i) {
    nn::ScopedTimer timer(step);
    table->forward(x);
    table->backward(x, gradOutput);
  }
  const std::string elsewhere = table->profileDetail(step);
  INFO(elsewhere);
  const std::vector<double> own = profileRow(elsewhere, "of which scatters");
  REQUIRE(own.size() == 2);
  for (size_t device = 0; device < 2; ++device) {
    CHECK(own[device] > 0);
    CHECK(own[device] <=
          profileRow(elsewhere, "forward")[1 + 2 * device] + profileRow(elsewhere, "backward")[1 + 2 * device]);
  }
  CHECK(profileRow(elsewhere, "one-call scatters").at(0) == 0);
}

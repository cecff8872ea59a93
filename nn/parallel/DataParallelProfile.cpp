// DataParallelTable's profile: the rounds of its device threads timed by part of the step, and
// the table of them that --profile prints (nn::setProfiling).
#include "nn/parallel/DataParallelTable.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace nn {

// Note [Device threads' profile]
// With profiling on (nn::setProfiling, --profile), the table times each round of its device
// threads as its caller sees it (from handing out the tasks until the last is done), and each
// device thread's task in it, per part of the step: the parameters' broadcast, forward (with the
// input's scatter), backward (with gradOutput's; or updateGradInput and accGradParameters, each
// called alone) and the gradients' reduce. A device thread's wait in a round is the round less
// its task: the time it sat idle while another device's task ran, and its wake-up; "of which
// starting" is the part before its task began (from the hand-out: a thread that had gone to sleep
// starts late, one that watched for the task at once). The caller's time in the table's calls
// less the rounds is what the caller did alone meanwhile (the checks, the batch made
// contiguous, the gathers, the collectives' lists), with every device thread idle.
// profileDetail prints these per step; the module rows of profileTable are the first replica's
// modules, the compute inside its tasks.

void DataParallelTable::runTimed(Part part, size_t count, FunctionRef<void(size_t)> task) {
  if (part == kUntimed || !profilingEnabled()) {
    threads_->run(count, task);
    return;
  }
  ScopedTimer round(profileTimes_.rounds[part]);
  std::vector<PassTime>& tasks = profileTimes_.tasks[part];
  std::vector<PassTime>& starts = profileTimes_.starts;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point handOut = Clock::now();
  threads_->run(count, [&](size_t i) {
    starts[i].seconds += std::chrono::duration<double>(Clock::now() - handOut).count();
    ++starts[i].calls;
    ScopedTimer timer(tasks[i]);
    task(i);
  });
}

void DataParallelTable::resetProfileDetail() {
  const size_t count = options_.devices.size();
  for (size_t part = 0; part < kParts; ++part) {
    profileTimes_.rounds[part] = PassTime();
    profileTimes_.tasks[part].assign(count, PassTime());
  }
  profileTimes_.starts.assign(count, PassTime());
  profileTimes_.scatters.assign(count, PassTime());
  profileTimes_.wholeScatters = PassTime();
  profileTimes_.calls = PassTime();
}

std::string DataParallelTable::profileDetail(const PassTime& step) const {
  const ProfileTimes& t = profileTimes_;
  if (t.calls.calls == 0) return {};
  const double perStep = 1e3 / static_cast<double>(std::max<int64_t>(step.calls, 1));
  std::string out = header() + ", ms per step: the rounds of its device threads by part of the step, each\n" +
                    "device thread's task and its wait for the others in them, and the caller alone in the table\n";
  char cell[64];
  auto add = [&](const char* format, auto... values) {
    std::snprintf(cell, sizeof cell, format, values...);
    out += cell;
  };
  add("%-18s %8s", "part", "rounds");
  for (const Device& d : devices()) add(" %11s %7s", (d.str() + " task").c_str(), "wait");
  out += "\n";
  static const char* const kNames[kParts] = {"broadcast",      "forward",  "gradInput",
                                             "gradParameters", "backward", "reduce"};
  double rounds = 0;
  std::vector<double> tasks(devices().size(), 0.);
  for (size_t part = 0; part < kParts; ++part) {
    if (t.rounds[part].calls == 0) continue;
    const double round = t.rounds[part].seconds;
    rounds += round;
    add("%-18s %8.3f", kNames[part], perStep * round);
    for (size_t i = 0; i < devices().size(); ++i) {
      const double task = t.tasks[part][i].seconds;
      tasks[i] += task;
      add(" %11.3f %7.3f", perStep * task, perStep * std::max(0., round - task));
    }
    out += "\n";
  }
  add("%-18s %8.3f", "all rounds", perStep * rounds);
  for (const double task : tasks) add(" %11.3f %7.3f", perStep * task, perStep * std::max(0., rounds - task));
  out += "\n";
  add("%-18s %8s", "of which starting", "");
  for (const PassTime& start : t.starts) add(" %11s %7.3f", "", perStep * start.seconds);
  out += "\n";
  add("%-18s %8s", "of which scatters", "");
  for (const PassTime& scatter : t.scatters) add(" %11.3f %7s", perStep * scatter.seconds, "");
  out += "\n";
  add("%-18s %8.3f", "the caller alone", perStep * std::max(0., t.calls.seconds - rounds));
  out += "  (checks, the batch made contiguous, one-call scatters, gathers, small collectives; no device thread)\n";
  add("%-18s %8.3f", "one-call scatters", perStep * t.wholeScatters.seconds);
  out += "  (a batch on the first device, cut along dimension 0, scattered by the communicator in one call)\n";
  add("%-18s %8.3f\n", "the table's calls", perStep * t.calls.seconds);
  return out;
}

}  // namespace nn

// Per-module time profile: when it is on, containers time each child's updateOutput,
// updateGradInput and accGradParameters into a record the child keeps (Module::profile), and
// profileTable() prints those records per training step, with sections the caller timed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nn {

class Module;

/// Time spent in one pass, and the number of calls.
struct PassTime {
  /// Total time of the calls, in seconds of a steady clock.
  double seconds = 0;
  /// Number of calls timed.
  int64_t calls = 0;
};

/// A module's record. It lives in the module and is written by the thread running the
/// module's pass, with no lock: a module runs on one thread at a time (the replicas of a
/// DataParallelTable are distinct modules, each on its device's thread). Read it while no
/// pass runs, e.g. between training steps.
struct ModuleTimes {
  /// Time in updateOutput (or updateOutputActivity).
  PassTime forward;
  /// Time in updateGradInput (or updateGradInputActivity).
  PassTime gradInput;
  /// Time in accGradParameters (or accGradParametersActivity).
  PassTime gradParameters;
};

/// Turns profiling on or off for the whole process (off by default). Off, a timed call costs
/// one flag read.
void setProfiling(bool on);
/// Whether profiling is on (setProfiling).
bool profilingEnabled();

/// Adds the time of its scope and one call to `into` when profiling was on at its
/// construction; does nothing otherwise. Allocates nothing.
class ScopedTimer {
 public:
  /// Starts timing into `into` where profiling is on.
  explicit ScopedTimer(PassTime& into) : into_(profilingEnabled() ? &into : nullptr), start_(into_ ? now() : 0) {}
  ~ScopedTimer();
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  static int64_t now();  // nanoseconds of a steady clock

  PassTime* into_;
  int64_t start_;
};

/// Zeroes the records of `root` and of every module below it.
void resetProfile(Module& root);

/// A part of the training step that the caller timed itself (data copy, criterion, SGD step).
struct ProfileSection {
  /// The row's label ("criterion").
  std::string name;
  /// Its time over all the steps, and its number of calls.
  PassTime time;
};

/// A table of milliseconds per step: forward, backward (updateGradInput + accGradParameters),
/// their total and its share of `step` (the whole step, timed by the caller; its calls are the
/// steps), for every module below `root` that a container timed, indented by depth and named
/// "(i) description" by its place in its parent; then `sections`, and "other", the part of the
/// step in no row above. Below a DataParallelTable these are the first replica's modules, on
/// the first device's thread, so "other" holds the scatter, gather and reductions and any wait
/// for the other devices. After the table, every module's profileDetail (the table's per device
/// thread), the root's first.
std::string profileTable(Module& root, const std::vector<ProfileSection>& sections, const PassTime& step);

}  // namespace nn

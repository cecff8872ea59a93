// The per-module time profile: the switch, the timer and the table.
#include "nn/core/Profiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "nn/core/Module.h"

namespace nn {

namespace {

std::atomic<bool> gProfiling{false};

struct Row {
  std::string label;
  double forward, backward;  // seconds over all steps
  bool counted;              // its time is not already inside a row above it
};

// Rows for the modules below `parent` that a container timed, depth first. A timed module's
// time holds that of its children, so only the outermost timed modules count towards the step.
void collectRows(const Module& parent, int depth, bool insideTimed, std::vector<Row>& rows) {
  const std::vector<ModulePtr>& kids = parent.children();
  for (size_t i = 0; i < kids.size(); ++i) {
    const Module& m = *kids[i];
    const ModuleTimes& t = m.profile;
    const bool timed = t.forward.calls + t.gradInput.calls + t.gradParameters.calls > 0;
    if (timed) {
      // A container's description spans lines; its type names it.
      const std::string name = m.children().empty() ? m.toString() : m.typeName();
      rows.push_back({std::string(2 * static_cast<size_t>(depth), ' ') + "(" + std::to_string(i + 1) + ") " + name,
                      t.forward.seconds, t.gradInput.seconds + t.gradParameters.seconds, !insideTimed});
    }
    collectRows(m, timed ? depth + 1 : depth, insideTimed || timed, rows);
  }
}

std::string formatRow(const std::string& label, int width, const char* forward, const char* backward, double total,
                      double share) {
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %9s %9s %9.3f %6.1f%%\n", width, label.c_str(), forward, backward, total,
                share);
  return line;
}

// Each module's profileDetail, the root's first, then its children's, depth first.
void appendDetails(const Module& m, const PassTime& step, std::string& out) {
  out += m.profileDetail(step);
  for (const ModulePtr& child : m.children()) appendDetails(*child, step, out);
}

}  // namespace

void setProfiling(bool on) { gProfiling = on; }
bool profilingEnabled() { return gProfiling.load(std::memory_order_relaxed); }

int64_t ScopedTimer::now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ScopedTimer::~ScopedTimer() {
  if (into_ == nullptr) return;
  into_->seconds += static_cast<double>(now() - start_) * 1e-9;
  ++into_->calls;
}

// Walks children() rather than apply(): a DataParallelTable's apply marks its replicas stale.
void resetProfile(Module& root) {
  root.profile = ModuleTimes();
  root.resetProfileDetail();
  for (const ModulePtr& child : root.children()) resetProfile(*child);
}

std::string profileTable(Module& root, const std::vector<ProfileSection>& sections, const PassTime& step) {
  std::vector<Row> rows;
  collectRows(root, 0, false, rows);
  int width = 24;
  for (const Row& r : rows) width = std::max(width, static_cast<int>(r.label.size()));
  for (const ProfileSection& s : sections) width = std::max(width, static_cast<int>(s.name.size()));

  const double steps = static_cast<double>(std::max<int64_t>(step.calls, 1));
  const double stepMs = 1e3 * step.seconds / steps;
  auto ms = [&](double seconds) { return 1e3 * seconds / steps; };
  auto share = [&](double seconds) { return step.seconds > 0 ? 100 * seconds / step.seconds : 0.; };
  char number[2][32];
  auto format = [&](int slot, double value) {
    std::snprintf(number[slot], sizeof number[slot], "%.3f", value);
    return number[slot];
  };

  char head[512];
  std::snprintf(head, sizeof head,
                "profile of %lld steps, %.3f ms per step (columns: ms per step, share of the step)\n",
                static_cast<long long>(step.calls), stepMs);
  std::string out = head;
  std::snprintf(head, sizeof head, "%-*s %9s %9s %9s %7s\n", width, "module", "forward", "backward", "total", "share");
  out += head;
  double accounted = 0;
  for (const Row& r : rows) {
    out += formatRow(r.label, width, format(0, ms(r.forward)), format(1, ms(r.backward)), ms(r.forward + r.backward),
                     share(r.forward + r.backward));
    if (r.counted) accounted += r.forward + r.backward;
  }
  for (const ProfileSection& s : sections) {
    out += formatRow(s.name, width, "", "", ms(s.time.seconds), share(s.time.seconds));
    accounted += s.time.seconds;
  }
  const double other = std::max(0., step.seconds - accounted);
  out += formatRow("other", width, "", "", ms(other), share(other));
  out += formatRow("step", width, "", "", stepMs, step.seconds > 0 ? 100. : 0.);
  appendDetails(root, step, out);
  return out;
}

}  // namespace nn

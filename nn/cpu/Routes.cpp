// The route counters (Routes.h).
#include "nn/cpu/Routes.h"

#include <atomic>

namespace nn::cpu {

namespace {

std::atomic<int64_t> counts[kRoutes][kPasses];
std::atomic<int64_t> forms[3];

}  // namespace

void countRoute(Route route, Pass pass) {
  counts[static_cast<int>(route)][static_cast<int>(pass)].fetch_add(1, std::memory_order_relaxed);
}

int64_t routeCount(Route route, Pass pass) {
  return counts[static_cast<int>(route)][static_cast<int>(pass)].load(std::memory_order_relaxed);
}

void countForm(Isa form) { forms[static_cast<int>(form)].fetch_add(1, std::memory_order_relaxed); }

int64_t formCount(Isa form) { return forms[static_cast<int>(form)].load(std::memory_order_relaxed); }

}  // namespace nn::cpu

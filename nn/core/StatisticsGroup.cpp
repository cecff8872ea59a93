// nn::StatisticsGroup: one group per thread.
#include "nn/core/StatisticsGroup.h"

namespace nn {

namespace {
thread_local StatisticsGroup* current = nullptr;
}  // namespace

ScopedStatisticsGroup::ScopedStatisticsGroup(StatisticsGroup* group) : previous_(current) { current = group; }

ScopedStatisticsGroup::~ScopedStatisticsGroup() { current = previous_; }

StatisticsGroup* currentStatisticsGroup() { return current; }

}  // namespace nn

// nn::GradientObserver: one observer per thread.
#include "nn/core/GradientObserver.h"

namespace nn {

namespace {
thread_local GradientObserver* current = nullptr;
}  // namespace

ScopedGradientObserver::ScopedGradientObserver(GradientObserver* observer) : previous_(current) { current = observer; }

ScopedGradientObserver::~ScopedGradientObserver() { current = previous_; }

void notifyGradientsDone(const Module& module) {
  if (current != nullptr) current->gradientsDone(module);
}

}  // namespace nn

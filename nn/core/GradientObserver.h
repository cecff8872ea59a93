// nn::GradientObserver: told, on the thread that runs a backward, each time a child's
// accGradParameters has returned (Container calls it), so that the child's gradients are final
// for this backward. DistributedDataParallelTable starts summing them over the processes while
// backward goes on with the modules below (PyTorch's DDP does the same with autograd hooks).
#pragma once

namespace nn {

class Module;

/// The interface told when a module's gradients are final for this backward (see the top of
/// this file); installed on a thread with ScopedGradientObserver.
class GradientObserver {
 public:
  virtual ~GradientObserver() = default;
  /// `module`'s accGradParameters has returned: its gradients, and those of every module
  /// inside it, hold this backward's sum, unless the same parameters are accumulated again
  /// later in it (a module used twice), which the observer must allow for.
  virtual void gradientsDone(const Module& module) = 0;
};

/// The calling thread's observer while this object lives (the one before it afterwards). The
/// threads of a DataParallelTable's devices have none: a replica's gradients are final only
/// once the table has summed them.
class ScopedGradientObserver {
 public:
  /// Makes `observer` (null for none) the calling thread's observer until this object is destroyed.
  explicit ScopedGradientObserver(GradientObserver* observer);
  ~ScopedGradientObserver();
  ScopedGradientObserver(const ScopedGradientObserver&) = delete;
  ScopedGradientObserver& operator=(const ScopedGradientObserver&) = delete;

 private:
  GradientObserver* previous_;
};

/// Tells the calling thread's observer, if it has one.
void notifyGradientsDone(const Module& module);

}  // namespace nn

// Learning-rate schedules, as PyTorch's torch.optim.lr_scheduler names and computes them: each
// sets its optimizer's learning rate (Optimizer::setLearningRate) from a count of its own steps,
// which the training loop advances once an epoch (or once a training step, for one-cycle), and
// reduce-on-plateau from a metric. Each schedule's rate is a closed formula of its count, so a
// checkpoint holds the count (and reduce-on-plateau its few numbers) and a resumed run sets the
// very rate it would have had (nn/io/Checkpoint.h).
//
//   nn::SGD sgd(model->getParameters(), options);
//   nn::CosineAnnealingLR schedule(sgd, /*tMax=*/epochs);
//   for (epoch ...) { train(); schedule.step(); }
//
// The rate a schedule sets is the optimizer's learning rate; Torch7's learningRateDecay, where an
// optimizer has one, still divides it at each step: with a schedule, leave it at 0.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/optim/Optimizer.h"

namespace nn {

/// A schedule of the learning rate over its steps (see the file comment).
class LrScheduler {
 public:
  LrScheduler(const LrScheduler&) = delete;
  LrScheduler& operator=(const LrScheduler&) = delete;
  virtual ~LrScheduler() = default;

  /// Advances the count by one and sets the optimizer's learning rate to rateAt(count)
  /// (PyTorch's scheduler.step()).
  virtual void step();
  /// The rate at count t (0: as made): the schedule's formula, from the base rate.
  virtual double rateAt(int64_t t) const = 0;
  /// PyTorch's class name of the schedule ("CosineAnnealingLR"); checkpoints record it.
  virtual std::string typeName() const = 0;

  /// The steps taken (PyTorch's last_epoch).
  int64_t stepCount() const { return count_; }
  /// The optimizer's learning rate when the schedule was made, which its formula scales.
  double baseRate() const { return baseRate_; }
  /// What a checkpoint holds to go on: "count", "base", and a schedule's own numbers.
  virtual std::map<std::string, double> state() const;
  /// Restores state() and sets the optimizer's rate from it; an nn::Error names what is missing or
  /// out of range.
  virtual void setState(const std::map<std::string, double>& state);

 protected:
  /// On `optimizer`, whose initialLearningRate() is the base rate.
  explicit LrScheduler(Optimizer& optimizer);
  /// Sets the optimizer's rate to rateAt(0), as PyTorch's schedules do as they are made: each
  /// schedule's constructor calls it once its options are checked.
  void start();
  /// Throws "nn.StepLR: expected ..., got ..." unless `ok`.
  void check(bool ok, const std::string& what) const;

  Optimizer& optimizer_;
  double baseRate_;
  int64_t count_ = 0;
};

/// PyTorch's StepLR: base * gamma^floor(t / stepSize).
class StepLR : public LrScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t stepSize, double gamma = 0.1);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "StepLR"; }

 private:
  int64_t stepSize_;
  double gamma_;
};

/// PyTorch's MultiStepLR: base * gamma^(the milestones at or before t).
class MultiStepLR : public LrScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "MultiStepLR"; }

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

/// PyTorch's ExponentialLR: base * gamma^t.
class ExponentialLR : public LrScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "ExponentialLR"; }

 private:
  double gamma_;
};

/// PyTorch's LinearLR: base times a factor going linearly from startFactor to endFactor over
/// totalSteps, then endFactor (a linear warmup, with SequentialLR).
class LinearLR : public LrScheduler {
 public:
  LinearLR(Optimizer& optimizer, double startFactor = 1.0 / 3, double endFactor = 1.0, int64_t totalSteps = 5);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "LinearLR"; }

 private:
  double startFactor_, endFactor_;
  int64_t totalSteps_;
};

/// PyTorch's CosineAnnealingLR without restarts: minRate + (base - minRate) (1 + cos(pi t / tMax)) / 2,
/// which is minRate at tMax and past it comes back up as PyTorch's does.
class CosineAnnealingLR : public LrScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t tMax, double minRate = 0);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "CosineAnnealingLR"; }

 private:
  int64_t tMax_;
  double minRate_;
};

/// PyTorch's SequentialLR: each schedule for its stretch of steps, the next from each milestone
/// on, counting its own steps from 0 there (LinearLR then CosineAnnealingLR: cosine annealing with
/// a linear warmup). The schedules are made on the same optimizer, before this one.
class SequentialLR : public LrScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LrScheduler>> schedules,
               std::vector<int64_t> milestones);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "SequentialLR"; }

 private:
  std::vector<std::shared_ptr<LrScheduler>> schedules_;
  std::vector<int64_t> milestones_;
};

/// PyTorch's OneCycleLR (its learning rate; momentum is not cycled), stepped once a training
/// step: from maxRate / divFactor up to maxRate over the first pctStart of totalSteps, then down
/// to that / finalDivFactor, both along half a cosine. The base rate is maxRate / divFactor.
class OneCycleLR : public LrScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double maxRate, int64_t totalSteps, double pctStart = 0.3, double divFactor = 25,
             double finalDivFactor = 1e4);
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "OneCycleLR"; }
  /// The rates past totalSteps are refused, as PyTorch refuses them.
  void step() override;

 private:
  double maxRate_, initialRate_, finalRate_;
  int64_t totalSteps_;
  double warmupEnd_;
};

/// PyTorch's ReduceLROnPlateau in mode "min" (or "max") with relative thresholds: after more than
/// `patience` steps without improvement by `threshold`, the rate is multiplied by `factor` (at
/// least minRate), then `cooldown` steps pass before counting again. Its step takes the metric.
class ReduceLROnPlateau : public LrScheduler {
 public:
  ReduceLROnPlateau(Optimizer& optimizer, double factor = 0.1, int64_t patience = 10, double threshold = 1e-4,
                    int64_t cooldown = 0, double minRate = 0, bool maximize = false);
  /// Takes the epoch's metric (a validation loss, say) and lowers the rate where it stalled.
  void step(double metric);
  /// The rate in force: it depends on the metrics seen, not on t alone.
  double rateAt(int64_t t) const override;
  std::string typeName() const override { return "ReduceLROnPlateau"; }
  std::map<std::string, double> state() const override;
  void setState(const std::map<std::string, double>& state) override;

 private:
  void step() override;  // a plateau needs a metric

  double factor_, threshold_, minRate_;
  int64_t patience_, cooldown_;
  bool maximize_;
  double rate_;
  double best_;
  int64_t badSteps_ = 0, cooldownLeft_ = 0;
};

}  // namespace nn

// The learning-rate schedules (LrScheduler.h): PyTorch's closed formulas of each schedule's count.
#include "nn/optim/LrScheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// std::pow of an integer power, as Python's float ** int gives it for the counts schedules reach.
double power(double base, int64_t exponent) { return std::pow(base, static_cast<double>(exponent)); }

double number(const std::map<std::string, double>& state, const std::string& key, const std::string& who) {
  auto it = state.find(key);
  NN_CHECK(it != state.end(), who << ": the saved state has no '" << key << "'");
  NN_CHECK(std::isfinite(it->second) || key == "best", who << ": the saved '" << key << "' is " << it->second);
  return it->second;
}

int64_t count(const std::map<std::string, double>& state, const std::string& key, const std::string& who) {
  const double v = number(state, key, who);
  NN_CHECK(v >= 0 && v <= 1e15 && std::floor(v) == v, who << ": the saved '" << key << "' is " << v << ", not a count");
  return static_cast<int64_t>(v);
}

}  // namespace

LrScheduler::LrScheduler(Optimizer& optimizer) : optimizer_(optimizer), baseRate_(optimizer.initialLearningRate()) {}

void LrScheduler::start() { optimizer_.setLearningRate(rateAt(0)); }

void LrScheduler::check(bool ok, const std::string& what) const { NN_CHECK(ok, "nn." << typeName() << ": " << what); }

void LrScheduler::step() {
  ++count_;
  optimizer_.setLearningRate(rateAt(count_));
}

std::map<std::string, double> LrScheduler::state() const {
  return {{"count", static_cast<double>(count_)}, {"base", baseRate_}};
}

void LrScheduler::setState(const std::map<std::string, double>& state) {
  const std::string who = "nn." + typeName();
  const int64_t restored = count(state, "count", who);
  const double base = number(state, "base", who);
  NN_CHECK(base >= 0, who << ": the saved base rate is " << base);
  count_ = restored;
  baseRate_ = base;
  optimizer_.setLearningRate(rateAt(count_));
}

StepLR::StepLR(Optimizer& optimizer, int64_t stepSize, double gamma)
    : LrScheduler(optimizer), stepSize_(stepSize), gamma_(gamma) {
  check(stepSize > 0, "expected a positive step size, got " + std::to_string(stepSize));
  check(std::isfinite(gamma) && gamma >= 0, "expected a finite gamma >= 0, got " + std::to_string(gamma));
  start();
}

double StepLR::rateAt(int64_t t) const { return baseRate_ * power(gamma_, t / stepSize_); }

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LrScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  for (int64_t m : milestones_) check(m >= 0, "expected milestones >= 0, got " + std::to_string(m));
  check(std::isfinite(gamma) && gamma >= 0, "expected a finite gamma >= 0, got " + std::to_string(gamma));
  std::sort(milestones_.begin(), milestones_.end());
  start();
}

double MultiStepLR::rateAt(int64_t t) const {
  // Python's bisect_right: the milestones at or before t, each as often as it was given.
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), t) - milestones_.begin();
  return baseRate_ * power(gamma_, passed);
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LrScheduler(optimizer), gamma_(gamma) {
  check(std::isfinite(gamma) && gamma >= 0, "expected a finite gamma >= 0, got " + std::to_string(gamma));
  start();
}

double ExponentialLR::rateAt(int64_t t) const { return baseRate_ * power(gamma_, t); }

LinearLR::LinearLR(Optimizer& optimizer, double startFactor, double endFactor, int64_t totalSteps)
    : LrScheduler(optimizer), startFactor_(startFactor), endFactor_(endFactor), totalSteps_(totalSteps) {
  check(startFactor > 0 && startFactor <= 1, "expected a start factor in (0, 1], got " + std::to_string(startFactor));
  check(endFactor >= 0 && endFactor <= 1, "expected an end factor in [0, 1], got " + std::to_string(endFactor));
  check(totalSteps > 0, "expected a positive number of steps, got " + std::to_string(totalSteps));
  start();
}

double LinearLR::rateAt(int64_t t) const {
  const double done = static_cast<double>(std::min(t, totalSteps_));
  return baseRate_ * (startFactor_ + (endFactor_ - startFactor_) * done / static_cast<double>(totalSteps_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t tMax, double minRate)
    : LrScheduler(optimizer), tMax_(tMax), minRate_(minRate) {
  check(tMax > 0, "expected a positive tMax, got " + std::to_string(tMax));
  check(std::isfinite(minRate) && minRate >= 0, "expected a finite minimum rate >= 0, got " + std::to_string(minRate));
  start();
}

double CosineAnnealingLR::rateAt(int64_t t) const {
  const double pi = std::acos(-1.0);
  return minRate_ +
         (baseRate_ - minRate_) * (1 + std::cos(pi * static_cast<double>(t) / static_cast<double>(tMax_))) / 2;
}

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LrScheduler>> schedules,
                           std::vector<int64_t> milestones)
    : LrScheduler(optimizer), schedules_(std::move(schedules)), milestones_(std::move(milestones)) {
  check(!schedules_.empty(), "expected at least one schedule");
  check(milestones_.size() + 1 == schedules_.size(), "expected one milestone fewer than schedules, got " +
                                                         std::to_string(milestones_.size()) + " for " +
                                                         std::to_string(schedules_.size()));
  for (size_t i = 0; i < milestones_.size(); ++i)
    check(milestones_[i] > 0 && (i == 0 || milestones_[i] > milestones_[i - 1]),
          "expected increasing milestones > 0, got " + std::to_string(milestones_[i]));
  for (const auto& s : schedules_) check(s != nullptr, "expected schedules, got a null one");
  start();
}

double SequentialLR::rateAt(int64_t t) const {
  // The schedule of t's stretch, at its own count: steps since the milestone that began it.
  const auto stretch = std::upper_bound(milestones_.begin(), milestones_.end(), t) - milestones_.begin();
  const int64_t since = stretch == 0 ? t : t - milestones_[static_cast<size_t>(stretch - 1)];
  return schedules_[static_cast<size_t>(stretch)]->rateAt(since);
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double maxRate, int64_t totalSteps, double pctStart, double divFactor,
                       double finalDivFactor)
    : LrScheduler(optimizer),
      maxRate_(maxRate),
      initialRate_(maxRate / divFactor),
      finalRate_(maxRate / divFactor / finalDivFactor),
      totalSteps_(totalSteps),
      warmupEnd_(pctStart * static_cast<double>(totalSteps) - 1) {
  check(std::isfinite(maxRate) && maxRate > 0, "expected a positive maximum rate, got " + std::to_string(maxRate));
  check(totalSteps > 1, "expected more than one step, got " + std::to_string(totalSteps));
  check(pctStart > 0 && pctStart < 1, "expected pctStart in (0, 1), got " + std::to_string(pctStart));
  check(divFactor > 0 && finalDivFactor > 0, "expected positive division factors");
  check(warmupEnd_ > 0 && warmupEnd_ < static_cast<double>(totalSteps - 1),
        "expected pctStart to leave steps to both phases");
  // PyTorch's OneCycleLR sets the base itself: maxRate / divFactor.
  baseRate_ = initialRate_;
  start();
}

double OneCycleLR::rateAt(int64_t t) const {
  // PyTorch's _annealing_cos between a phase's ends, over the phase's steps.
  auto anneal = [](double from, double to, double pct) {
    return to + (from - to) / 2 * (std::cos(std::acos(-1.0) * pct) + 1);
  };
  const double step = static_cast<double>(t);
  if (step <= warmupEnd_) return anneal(initialRate_, maxRate_, step / warmupEnd_);
  const double end = static_cast<double>(totalSteps_ - 1);
  return anneal(maxRate_, finalRate_, (step - warmupEnd_) / (end - warmupEnd_));
}

void OneCycleLR::step() {
  check(count_ + 1 <= totalSteps_, "stepped past its " + std::to_string(totalSteps_) + " steps");
  LrScheduler::step();
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, double factor, int64_t patience, double threshold,
                                     int64_t cooldown, double minRate, bool maximize)
    : LrScheduler(optimizer),
      factor_(factor),
      threshold_(threshold),
      minRate_(minRate),
      patience_(patience),
      cooldown_(cooldown),
      maximize_(maximize),
      rate_(optimizer.learningRate()),
      best_(maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {
  check(factor >= 0 && factor < 1, "expected a factor in [0, 1), got " + std::to_string(factor));
  check(patience >= 0 && cooldown >= 0, "expected a patience and a cooldown >= 0");
  check(std::isfinite(threshold) && threshold >= 0, "expected a finite threshold >= 0");
  check(std::isfinite(minRate) && minRate >= 0, "expected a finite minimum rate >= 0");
}

void ReduceLROnPlateau::step() { check(false, "step() needs the metric: step(metric)"); }

void ReduceLROnPlateau::step(double metric) {
  check(!std::isnan(metric), "expected a metric, got NaN");
  ++count_;
  const bool better = maximize_ ? metric > best_ * (1 + threshold_) : metric < best_ * (1 - threshold_);
  if (better) {
    best_ = metric;
    badSteps_ = 0;
  } else {
    ++badSteps_;
  }
  if (cooldownLeft_ > 0) {
    --cooldownLeft_;
    badSteps_ = 0;
  }
  if (badSteps_ > patience_) {
    // PyTorch lowers the rate only by more than its eps, 1e-8.
    const double lowered = std::max(rate_ * factor_, minRate_);
    if (rate_ - lowered > 1e-8) rate_ = lowered;
    cooldownLeft_ = cooldown_;
    badSteps_ = 0;
  }
  optimizer_.setLearningRate(rate_);
}

double ReduceLROnPlateau::rateAt(int64_t) const { return rate_; }

std::map<std::string, double> ReduceLROnPlateau::state() const {
  std::map<std::string, double> s = LrScheduler::state();
  s["rate"] = rate_;
  s["best"] = best_;
  s["bad"] = static_cast<double>(badSteps_);
  s["cooldown"] = static_cast<double>(cooldownLeft_);
  return s;
}

void ReduceLROnPlateau::setState(const std::map<std::string, double>& state) {
  const std::string who = "nn." + typeName();
  const double rate = number(state, "rate", who), best = number(state, "best", who);
  NN_CHECK(std::isfinite(rate) && rate >= 0, who << ": the saved rate is " << rate);
  NN_CHECK(!std::isnan(best), who << ": the saved best metric is NaN");
  const int64_t bad = count(state, "bad", who), cooldown = count(state, "cooldown", who);
  count(state, "count", who);  // checked before anything changes
  number(state, "base", who);
  rate_ = rate;
  best_ = best;
  badSteps_ = bad;
  cooldownLeft_ = cooldown;
  LrScheduler::setState(state);
}

}  // namespace nn

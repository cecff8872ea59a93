// The training program's optimizer (--optimizer and its settings) and learning-rate schedule
// (--lr-schedule, --warmup-epochs).
#include "examples/TrainerParts.h"

#include <algorithm>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace examples::trainer {

float defaultLearningRate(const Options& o) {
  if (o.optimizer == "adam" || o.optimizer == "adamw") return 1e-3f;
  if (o.optimizer == "adagrad") return 1e-2f;
  if (o.optimizer == "rmsprop") return 1e-3f;
  return o.sgdLearningRate;
}

// The learning rate of the next step: the optimizer's (a schedule's, where there is one) with
// Torch7's decay, lr / (1 + t * lrDecay).
double nextLearningRate(const Options& o, const nn::Optimizer& optimizer) {
  const double lr = optimizer.learningRate();
  return o.optimizer == "rmsprop" ? lr : lr / (1 + static_cast<double>(optimizer.stepCount()) * o.learningRateDecay);
}

// The schedule of --lr-schedule over `optimizer`, with --warmup-epochs before it; null for none.
// It counts epochs, but onecycle counts training steps (`stepsPerEpoch` of them an epoch).
std::unique_ptr<nn::LrScheduler> makeScheduler(const Options& o, nn::Optimizer& optimizer, int64_t stepsPerEpoch) {
  if (o.lrSchedule == "onecycle")
    return std::make_unique<nn::OneCycleLR>(optimizer, optimizer.learningRate(), o.epochs * stepsPerEpoch);
  if (o.lrSchedule == "plateau")
    return std::make_unique<nn::ReduceLROnPlateau>(optimizer, o.lrGamma, 2, 1e-4, 0, o.minLr);
  if (o.lrSchedule == "none" && o.warmupEpochs == 0) return nullptr;
  std::vector<std::shared_ptr<nn::LrScheduler>> stages;
  if (o.warmupEpochs > 0) stages.push_back(std::make_shared<nn::LinearLR>(optimizer, 0.1, 1.0, o.warmupEpochs));
  const int64_t after = o.epochs - o.warmupEpochs;  // the epochs the schedule itself runs
  if (o.lrSchedule == "step")
    stages.push_back(
        std::make_shared<nn::StepLR>(optimizer, o.lrStep > 0 ? o.lrStep : std::max<int64_t>(1, after / 3), o.lrGamma));
  else if (o.lrSchedule == "multistep")
    stages.push_back(std::make_shared<nn::MultiStepLR>(optimizer, o.lrMilestones, o.lrGamma));
  else if (o.lrSchedule == "exponential")
    stages.push_back(std::make_shared<nn::ExponentialLR>(optimizer, o.lrGamma));
  else if (o.lrSchedule == "cosine")
    stages.push_back(std::make_shared<nn::CosineAnnealingLR>(optimizer, std::max<int64_t>(1, after), o.minLr));
  else
    stages.push_back(std::make_shared<nn::LinearLR>(optimizer, 1.0, 1.0, 1));  // warmup, then the rate as given
  std::vector<int64_t> milestones;
  if (o.warmupEpochs > 0) milestones.push_back(o.warmupEpochs);
  return std::make_unique<nn::SequentialLR>(optimizer, std::move(stages), std::move(milestones));
}

// The optimizer of --optimizer over the model's flat buffers, with the flags' settings.
std::unique_ptr<nn::Optimizer> makeOptimizer(const Options& o, std::pair<nn::Tensor, nn::Tensor> parameters) {
  const float lr = o.learningRate >= 0 ? o.learningRate : defaultLearningRate(o);
  // The settings every optimizer's options share; rmsprop has no learning rate decay.
  auto settings = [&](auto options) {
    options.learningRate = lr;
    options.weightDecay = o.weightDecay;
    if constexpr (!std::is_same_v<decltype(options), nn::RmspropOptions>)
      options.learningRateDecay = o.learningRateDecay;
    return options;
  };
  if (o.optimizer == "adam") return std::make_unique<nn::Adam>(std::move(parameters), settings(nn::AdamOptions()));
  if (o.optimizer == "adamw") return std::make_unique<nn::AdamW>(std::move(parameters), settings(nn::AdamWOptions()));
  if (o.optimizer == "adagrad")
    return std::make_unique<nn::Adagrad>(std::move(parameters), settings(nn::AdagradOptions()));
  if (o.optimizer == "rmsprop")
    return std::make_unique<nn::RMSprop>(std::move(parameters), settings(nn::RmspropOptions()));
  nn::SgdOptions s = settings(nn::SgdOptions());
  s.momentum = o.momentum;
  s.dampening = 0.f;
  return std::make_unique<nn::SGD>(std::move(parameters), s);
}

}  // namespace examples::trainer

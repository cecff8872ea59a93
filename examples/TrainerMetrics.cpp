// What the training program reports: progress on stderr, --profile's table, the epoch's line,
// --logdir's TensorBoard scalars and --metrics' lines.
#include "examples/TrainerParts.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace examples::trainer {

namespace {

// A metrics value: the number, or null where it is not finite (JSON has no NaN).
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  // The shortest text that reads back as the same double.
  char text[32];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

// --metrics: appended, a line per epoch: the file may be a pipe or a terminal, and a resumed run
// adds to what is there (readers take the last line of each epoch).
void appendMetrics(const Run& r, const Epoch& e, double trainLoss, double testAccuracy) {
  std::ostringstream line;
  line << "{\"epoch\": " << e.number << ", \"train_loss\": " << jsonNumber(trainLoss)
       << ", \"test_accuracy\": " << jsonNumber(testAccuracy) << ", \"seconds\": " << jsonNumber(e.elapsed)
       << ", \"images_per_second\": " << jsonNumber(e.seen / e.elapsed) << ", \"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) line << (i ? ", " : "") << "\"" << r.devices[i].str() << "\"";
  line << "], \"threads\": " << r.o.threads << ", \"batch_size\": " << r.o.batchSize
       << ", \"learning_rate\": " << jsonNumber(nextLearningRate(r.o, *r.optimizer)) << "}\n";
  nn::appendToFile(r.o.metrics, line.str());
}

}  // namespace

// --logdir: this process's loss (its shard's under mpirun) and the epoch's speed so far.
void logStep(Run& r, const Epoch& e, double loss) {
  if (!r.events) return;
  r.events->addScalar("train/loss", loss, r.optimizer->stepCount());
  r.events->addScalar("train/images_per_second", static_cast<double>(e.seen) / (seconds() - e.start),
                      r.optimizer->stepCount());
  r.events->addScalar("train/learning_rate", nextLearningRate(r.o, *r.optimizer), r.optimizer->stepCount());
  r.events->addScalar("train/grad_norm", r.gradientNorm, r.optimizer->stepCount());
}

// A live line on a terminal; four lines an epoch into a log.
void reportProgress(const Run& r, const Epoch& e) {
  const bool report =
      r.interactive ? e.stepsHere % 20 == 0 : e.stepsHere % std::max<int64_t>(1, r.batches->batchesPerEpoch() / 4) == 0;
  if (report && r.lead)
    std::fprintf(stderr, "%sepoch %lld  %6lld/%lld  loss %.4f  %.0f images/s%s", r.interactive ? "\r" : "",
                 static_cast<long long>(e.number), static_cast<long long>(e.seen),
                 static_cast<long long>(r.data.train->size()), e.lossSum / e.steps, e.seen / (seconds() - e.start),
                 r.interactive ? "" : "\n");
}

// --profile: each module's forward and backward per step, and the step's other parts.
void printProfile(const Run& r, const Epoch& e) {
  if (!r.o.profile || !r.lead) return;
  if (r.interactive) std::fprintf(stderr, "\r%72s\r", "");
  const StepTimes& t = e.times;
  const nn::PassTime step{t.data.seconds + t.compute.seconds, t.compute.calls};
  std::printf("%s", nn::profileTable(*r.model,
                                     {{"batch and copy to the device", t.data},
                                      {"zeroGradParameters", t.zero},
                                      {"criterion", t.criterion},
                                      {"optimizer step", t.step}},
                                     step)
                        .c_str());
}

// The lead's end of an epoch: the test accuracy, the epoch's line, its TensorBoard scalars, the
// checkpoint and the metrics.
void recordEpoch(Run& r, const Epoch& e, double trainLoss) {
  double testAccuracy = 0;
  if (r.average) {
    const nn::AveragedWeights averaged(*r.average);
    testAccuracy = accuracy(*r.model, r.data, r.devices[0], r.o.autocast);
  } else {
    testAccuracy = accuracy(*r.model, r.data, r.devices[0], r.o.autocast);
  }
  if (r.interactive) std::fprintf(stderr, "\r%72s\r", "");
  std::printf("epoch %lld  train loss %.4f  test accuracy %.4f  %.1f s  %.0f images/s\n",
              static_cast<long long>(e.number), trainLoss, testAccuracy, e.elapsed, e.seen / e.elapsed);
  std::fflush(stdout);
  if (r.events) {
    r.events->addScalar("epoch/train_loss", trainLoss, e.number);
    r.events->addScalar("epoch/test_accuracy", testAccuracy, e.number);
    r.events->addScalar("epoch/learning_rate", nextLearningRate(r.o, *r.optimizer), e.number);
  }
  if (!r.o.save.empty()) saveFinite(r.state, r.o.save);
  if (!r.o.metrics.empty()) appendMetrics(r, e, trainLoss, testAccuracy);
}

}  // namespace examples::trainer

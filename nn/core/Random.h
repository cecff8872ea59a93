// Seeded random numbers: a Mersenne Twister (as Torch7's) with float conversions of our own,
// so that the same seed gives the same numbers with every compiler and standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace nn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : engine_(static_cast<std::mt19937::result_type>(seed)) {}
  void seed(uint64_t seed) { engine_.seed(static_cast<std::mt19937::result_type>(seed)); }
  uint32_t nextU32() { return static_cast<uint32_t>(engine_()); }
  /// Uniform in [0, 1) with 24 random bits.
  float uniform() { return static_cast<float>(nextU32() >> 8) * (1.0f / 16777216.0f); }
  /// Uniform in [low, high): finite bounds, low <= high, whose difference a float holds; any
  /// other (uniform_(1, 0), a NaN) is an nn::Error.
  float uniform(float low, float high) {
    if (!(low <= high && std::isfinite(high - low))) refuseUniform(low, high);
    return low + (high - low) * uniform();
  }
  /// Standard normal (Box-Muller).
  float normal();
  /// mean + stddev * normal(): a finite mean and a finite stddev >= 0, else an nn::Error.
  float normal(float mean, float stddev) {
    if (!(std::isfinite(mean) && stddev >= 0 && std::isfinite(stddev))) refuseNormal(mean, stddev);
    return mean + stddev * normal();
  }
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n);
  std::mt19937& engine() { return engine_; }

 private:
  [[noreturn]] static void refuseUniform(float low, float high);
  [[noreturn]] static void refuseNormal(float mean, float stddev);

  std::mt19937 engine_;
};

/// The process-wide generator used for default parameter initialisation.
Generator& defaultGenerator();
/// Seeds defaultGenerator(), as torch.manualSeed.
void manualSeed(uint64_t seed);

}  // namespace nn

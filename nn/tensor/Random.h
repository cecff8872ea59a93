// Seeded random numbers: a Mersenne Twister (as Torch7's) with float conversions of our own,
// so that the same seed gives the same numbers with every compiler and standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace nn {

/// A seeded stream of random numbers (Torch7's torch.Generator): std::mt19937 and the conversions
/// below. Not thread-safe: one thread draws from a generator at a time.
class Generator {
 public:
  /// A generator seeded with `seed`; only its low 32 bits count (std::mt19937's seed).
  explicit Generator(uint64_t seed = 0) : engine_(static_cast<std::mt19937::result_type>(seed)) {}
  /// Restarts the stream from `seed` (its low 32 bits), as a new Generator(seed) would.
  void seed(uint64_t seed) { engine_.seed(static_cast<std::mt19937::result_type>(seed)); }
  /// The next 32 random bits; every other draw is made from these.
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
  /// The underlying engine, to save and restore the stream's state (Module::clone() puts the
  /// default generator back this way) or to draw from it directly.
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

// Seeded random numbers.
#include "nn/tensor/Random.h"

#include <cmath>
#include <sstream>

#include "nn/tensor/Error.h"

namespace nn {

void Generator::refuseUniform(float low, float high) {
  std::ostringstream message;
  message << "nn: a uniform distribution needs finite bounds low <= high whose difference a float holds, got low "
          << low << " and high " << high;
  throw Error(message.str());
}

void Generator::refuseNormal(float mean, float stddev) {
  std::ostringstream message;
  message << "nn: a normal distribution needs a finite mean and a finite standard deviation >= 0, got mean " << mean
          << " and standard deviation " << stddev;
  throw Error(message.str());
}

float Generator::normal() {
  // Box-Muller on (0, 1]: 1 - uniform() never reaches 0, so the log is finite.
  const float u1 = 1.0f - uniform();
  const float u2 = uniform();
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}

uint64_t Generator::below(uint64_t n) {
  // Rejection sampling keeps every value equally likely.
  const uint64_t limit = (uint64_t{1} << 32) - ((uint64_t{1} << 32) % n);
  uint64_t r;
  do {
    r = nextU32();
  } while (r >= limit);
  return r % n;
}

Generator& defaultGenerator() {
  static Generator generator(0);
  return generator;
}

void manualSeed(uint64_t seed) { defaultGenerator().seed(seed); }

}  // namespace nn

// The launcher's environment, the group's timeout from the environment, and the checksums of a
// build and of data (Launch.h).
#include "nn/distributed/Launch.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Variable `name` as an integer from `least` to `most`; nullopt where it is not set.
std::optional<int> integerVariable(const char* name, long least, long most) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  NN_CHECK(*text != '\0' && *end == '\0' && errno == 0 && value >= least && value <= most,
           "nn.launchPlace: expected " << name << " to be a whole number from " << least << " to " << most << ", got '"
                                       << text << "'");
  return static_cast<int>(value);
}

// The four variables of one launcher, where its rank is set.
std::optional<LaunchPlace> placeFrom(const char* launcher, const char* rank, const char* size, const char* local,
                                     const char* localSize) {
  constexpr long kMost = std::numeric_limits<int>::max();
  const std::optional<int> r = integerVariable(rank, 0, kMost - 1);
  if (!r) return std::nullopt;
  const std::optional<int> n = integerVariable(size, 1, kMost);
  NN_CHECK(n.has_value(), "nn.launchPlace: " << rank << " is set but " << size << " is not");
  NN_CHECK(*r < *n, "nn.launchPlace: expected " << rank << " below " << size << " (" << *n << "), got " << *r);
  // A count of the host's processes as asked for (Slurm's per node) may exceed the job's: at most that.
  const std::optional<int> asked = integerVariable(localSize, 1, kMost);
  const int here = asked ? std::min(*asked, *n) : 1;
  const std::optional<int> l = integerVariable(local, 0, (asked ? here : *n) - 1);
  return LaunchPlace{*r, *n, l.value_or(0), here, launcher};
}

}  // namespace

LaunchPlace launchPlace() {
  if (auto p = placeFrom("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                         "OMPI_COMM_WORLD_LOCAL_SIZE"))
    return *p;
  if (auto p = placeFrom("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE")) return *p;
  if (auto p = placeFrom("PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")) return *p;
  return LaunchPlace{};
}

std::optional<double> timeoutFromEnvironment() {
  const char* text = std::getenv("NN_PROCESS_GROUP_TIMEOUT");
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  NN_CHECK(
      *text != '\0' && *end == '\0' && std::isfinite(seconds) && seconds > 0,
      "nn.ProcessGroup: expected NN_PROCESS_GROUP_TIMEOUT to be a positive number of seconds, got '" << text << "'");
  return seconds;
}

uint64_t checksum64(const void* data, size_t size, uint64_t seed) {
  // Four lanes of 8-byte words, each multiplied, rotated and multiplied (xxHash64's round), so
  // that the multiplications of the lanes overlap; the tail a byte at a time; then mixed.
  constexpr uint64_t k1 = 0x9E3779B185EBCA87ull, k2 = 0xC2B2AE3D27D4EB4Full, k3 = 0x165667B19E3779F9ull;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto round = [&](uint64_t lane, uint64_t word) { return rotl(lane + word * k2, 31) * k1; };
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lanes[4] = {seed + k1 + k2, seed + k2, seed, seed - k1};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t word;
      std::memcpy(&word, p + i + 8 * l, 8);
      lanes[l] = round(lanes[l], word);
    }
  uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18) + size;
  for (; i < size; ++i) h = rotl(h ^ (p[i] * k3), 11) * k1;
  h ^= h >> 33;
  h *= k2;
  h ^= h >> 29;
  h *= k3;
  return h ^ (h >> 32);
}

const std::string& buildIdentity() {
  static const std::string identity = [] {
    std::ifstream file("/proc/self/exe", std::ios::binary);
    if (!file) return std::string("unknown");
    std::vector<char> buffer(size_t{1} << 20);
    uint64_t sum = 0;
    while (file) {
      file.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      sum = checksum64(buffer.data(), static_cast<size_t>(file.gcount()), sum);
    }
    if (file.bad()) return std::string("unknown");
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum));
    return std::string(hex);
  }();
  return identity;
}

}  // namespace nn

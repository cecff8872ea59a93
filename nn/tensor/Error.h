// nn::Error, the one exception type of the library, and the check macro that raises it.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nn {

/// Raised for every misuse the library detects: wrong shapes, devices, files, indices.
/// The message names the module (or file) and says what was expected and what was given.
class Error : public std::runtime_error {
 public:
  /// An error whose what() is `message`.
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// "[4, 1, 28, 28]"
std::string shapeString(const std::vector<int64_t>& sizes);

}  // namespace nn

/// NN_CHECK(cond, "nn.Linear(2 -> 3): expected " << a << ", got " << b);
#define NN_CHECK(cond, message)                  \
  do {                                           \
    if (!(cond)) {                               \
      std::ostringstream nn_check_stream_;       \
      nn_check_stream_ << message;               \
      throw ::nn::Error(nn_check_stream_.str()); \
    }                                            \
  } while (0)

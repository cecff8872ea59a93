// Config: named constructor arguments.
#include "nn/Config.h"

#include <cmath>

#include "nn/Error.h"

namespace nn {

Config& Config::set(const std::string& key, double value) {
  Value v;
  v.numbers = {value};
  values_[key] = v;
  return *this;
}

Config& Config::set(const std::string& key, const std::vector<int64_t>& values) {
  Value v;
  v.isList = true;
  for (int64_t x : values) v.numbers.push_back(static_cast<double>(x));
  values_[key] = v;
  return *this;
}

Config& Config::set(const std::string& key, const std::string& text) {
  Value v;
  v.isText = true;
  v.text = text;
  values_[key] = v;
  return *this;
}

const std::string& Config::text(const std::string& key) const {
  auto it = values_.find(key);
  NN_CHECK(it != values_.end(), "module config: missing entry '" << key << "'");
  NN_CHECK(it->second.isText, "module config: entry '" << key << "' should be text");
  return it->second.text;
}

const Config::Value& Config::get(const std::string& key, bool list) const {
  auto it = values_.find(key);
  NN_CHECK(it != values_.end(), "module config: missing entry '" << key << "'");
  NN_CHECK(!it->second.isText && it->second.isList == list && (list || it->second.numbers.size() == 1),
           "module config: entry '" << key << "' should be " << (list ? "a list" : "a number"));
  return it->second;
}

double Config::number(const std::string& key) const { return get(key, false).numbers[0]; }

int64_t Config::integer(const std::string& key) const {
  const double v = number(key);
  NN_CHECK(std::floor(v) == v && std::fabs(v) < 9.0e15,
           "module config: entry '" << key << "' should be an integer, got " << v);
  return static_cast<int64_t>(v);
}

std::vector<int64_t> Config::integers(const std::string& key) const {
  std::vector<int64_t> out;
  for (double v : get(key, true).numbers) {
    NN_CHECK(std::floor(v) == v && std::fabs(v) < 9.0e15,
             "module config: entry '" << key << "' should hold integers, got " << v);
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

}  // namespace nn

// Config: named, typed constructor arguments.
#include "nn/core/Config.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

const char* typeOf(const Config::Value& v) {
  switch (v.index()) {
    case 0:
      return "a flag";
    case 1:
      return "an integer";
    case 2:
      return "a number";
    case 3:
      return "text";
    default:
      return "a list of integers";
  }
}

[[noreturn]] void wrongType(const std::string& who, const std::string& key, const char* expected,
                            const Config::Value& v) {
  throw Error(who + ": config entry '" + key + "': expected " + expected + ", got " + typeOf(v) + " " + toString(v));
}

}  // namespace

std::string toString(const Config::Value& value) {
  std::ostringstream s;
  if (const bool* b = std::get_if<bool>(&value)) {
    s << (*b ? "true" : "false");
  } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
    s << *i;
  } else if (const double* d = std::get_if<double>(&value)) {
    // Floats keep a float's digits: 0.001, not 0.0010000000474974513.
    const float f = static_cast<float>(*d);
    if (static_cast<double>(f) == *d)
      s << f;
    else
      s << *d;
  } else if (const std::string* t = std::get_if<std::string>(&value)) {
    s << "'" << *t << "'";
  } else {
    const auto& list = std::get<std::vector<int64_t>>(value);
    s << "[";
    for (size_t k = 0; k < list.size(); ++k) s << (k ? ", " : "") << list[k];
    s << "]";
  }
  return s.str();
}

Config& Config::set(const std::string& key, Value value) {
  for (auto& entry : values_)
    if (entry.first == key) {
      entry.second = std::move(value);
      return *this;
    }
  values_.emplace_back(key, std::move(value));
  return *this;
}

const Config::Value* Config::find(const std::string& key) const {
  for (const auto& entry : values_)
    if (entry.first == key) return &entry.second;
  return nullptr;
}

const Config::Value& Config::get(const std::string& key, const std::string& who) const {
  const Value* v = find(key);
  NN_CHECK(v != nullptr, who << ": config entry '" << key << "' is missing");
  return *v;
}

void Config::read(const std::string& key, bool& out, const std::string& who) const {
  const Value& v = get(key, who);
  if (const bool* b = std::get_if<bool>(&v)) {
    out = *b;
    return;
  }
  const int64_t* i = std::get_if<int64_t>(&v);
  if (i == nullptr || (*i != 0 && *i != 1)) wrongType(who, key, "a flag (true or false)", v);
  out = *i != 0;
}

void Config::read(const std::string& key, int64_t& out, const std::string& who) const {
  const Value& v = get(key, who);
  const int64_t* i = std::get_if<int64_t>(&v);
  if (i == nullptr) wrongType(who, key, "an integer", v);
  out = *i;
}

void Config::read(const std::string& key, int& out, const std::string& who) const {
  int64_t wide = 0;
  read(key, wide, who);
  NN_CHECK(wide >= std::numeric_limits<int>::min() && wide <= std::numeric_limits<int>::max(),
           who << ": config entry '" << key << "': " << wide << " is out of range");
  out = static_cast<int>(wide);
}

void Config::read(const std::string& key, double& out, const std::string& who) const {
  const Value& v = get(key, who);
  if (const double* d = std::get_if<double>(&v))
    out = *d;
  else if (const int64_t* i = std::get_if<int64_t>(&v))
    out = static_cast<double>(*i);
  else
    wrongType(who, key, "a number", v);
  NN_CHECK(std::isfinite(out), who << ": config entry '" << key << "': expected a finite number, got " << out);
}

void Config::read(const std::string& key, float& out, const std::string& who) const {
  double wide = 0;
  read(key, wide, who);
  NN_CHECK(std::fabs(wide) <= std::numeric_limits<float>::max(),
           who << ": config entry '" << key << "': " << wide << " is out of a float's range");
  out = static_cast<float>(wide);
}

void Config::read(const std::string& key, std::string& out, const std::string& who) const {
  const Value& v = get(key, who);
  const std::string* t = std::get_if<std::string>(&v);
  if (t == nullptr) wrongType(who, key, "text", v);
  out = *t;
}

void Config::read(const std::string& key, std::vector<int64_t>& out, const std::string& who) const {
  const Value& v = get(key, who);
  const auto* list = std::get_if<std::vector<int64_t>>(&v);
  if (list == nullptr) wrongType(who, key, "a list of integers", v);
  out = *list;
}

}  // namespace nn

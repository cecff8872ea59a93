// Config: the constructor arguments of a module, by name, with their types: a flag stays a
// bool, a count an integer, a list a list. clone() and nn::load rebuild a module from its type
// name and Config alone, and nn::save writes it into the file. Modules do not build one by
// hand: their options struct describes its fields once (nn/core/Options.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nn {

class Config {
 public:
  using Value = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

  /// Sets entry `key`, replacing an entry of that name. One overload per type, so that each
  /// value lands in its own alternative (an int is an integer, a float a number).
  Config& set(const std::string& key, Value value);
  Config& set(const std::string& key, bool value) { return set(key, Value(value)); }
  Config& set(const std::string& key, int value) { return set(key, Value(int64_t{value})); }
  Config& set(const std::string& key, int64_t value) { return set(key, Value(value)); }
  Config& set(const std::string& key, float value) { return set(key, Value(double{value})); }
  Config& set(const std::string& key, double value) { return set(key, Value(value)); }
  Config& set(const std::string& key, const char* text) { return set(key, Value(std::string(text))); }
  Config& set(const std::string& key, std::string text) { return set(key, Value(std::move(text))); }
  Config& set(const std::string& key, std::vector<int64_t> list) { return set(key, Value(std::move(list))); }

  bool has(const std::string& key) const { return find(key) != nullptr; }
  /// The entries in the order they were set.
  const std::vector<std::pair<std::string, Value>>& values() const { return values_; }

  /// Reads entry `key` into `out`, naming `who` (e.g. "nn.Linear") in the error for a missing
  /// entry or one of another type. Files written before the types were kept hold flags as 0
  /// and 1, which a bool takes; a floating-point field takes an integer.
  void read(const std::string& key, bool& out, const std::string& who) const;
  void read(const std::string& key, int64_t& out, const std::string& who) const;
  void read(const std::string& key, int& out, const std::string& who) const;
  void read(const std::string& key, double& out, const std::string& who) const;
  void read(const std::string& key, float& out, const std::string& who) const;
  void read(const std::string& key, std::string& out, const std::string& who) const;
  void read(const std::string& key, std::vector<int64_t>& out, const std::string& who) const;

 private:
  const Value* find(const std::string& key) const;
  const Value& get(const std::string& key, const std::string& who) const;

  std::vector<std::pair<std::string, Value>> values_;
};

/// "true", "10", "0.5", "'cpu:0'", "[1, 2]": a value as written in messages and descriptions.
std::string toString(const Config::Value& value);

}  // namespace nn

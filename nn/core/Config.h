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

/// A module's constructor arguments: named, typed entries in the order they were set (see the top
/// of this file).
class Config {
 public:
  /// One entry's value: a flag, an integer, a number (a float field is kept as a double), text or
  /// a list of integers.
  using Value = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

  /// Sets entry `key`, replacing an entry of that name. One overload per type, so that each
  /// value lands in its own alternative (an int is an integer, a float a number).
  Config& set(const std::string& key, Value value);
  /// Sets a flag; returns this Config for chaining.
  Config& set(const std::string& key, bool value) { return set(key, Value(value)); }
  /// Sets an integer (held as int64_t).
  Config& set(const std::string& key, int value) { return set(key, Value(int64_t{value})); }
  /// Sets an integer.
  Config& set(const std::string& key, int64_t value) { return set(key, Value(value)); }
  /// Sets a number (held as the double of the float).
  Config& set(const std::string& key, float value) { return set(key, Value(double{value})); }
  /// Sets a number.
  Config& set(const std::string& key, double value) { return set(key, Value(value)); }
  /// Sets text (rather than the flag a pointer would convert to).
  Config& set(const std::string& key, const char* text) { return set(key, Value(std::string(text))); }
  /// Sets text.
  Config& set(const std::string& key, std::string text) { return set(key, Value(std::move(text))); }
  /// Sets a list of integers.
  Config& set(const std::string& key, std::vector<int64_t> list) { return set(key, Value(std::move(list))); }

  /// True where an entry `key` exists, of any type.
  bool has(const std::string& key) const { return find(key) != nullptr; }
  /// The entries in the order they were set.
  const std::vector<std::pair<std::string, Value>>& values() const { return values_; }

  /// Reads entry `key` into `out`, naming `who` (e.g. "nn.Linear") in the error for a missing
  /// entry or one of another type. Files written before the types were kept hold flags as 0
  /// and 1, which a bool takes; a floating-point field takes an integer.
  void read(const std::string& key, bool& out, const std::string& who) const;
  /// Reads an integer; an nn::Error naming `who` for a missing entry or one of another type.
  void read(const std::string& key, int64_t& out, const std::string& who) const;
  /// Reads an integer that an int holds; an nn::Error as above, or for a value out of its range.
  void read(const std::string& key, int& out, const std::string& who) const;
  /// Reads a finite number, or an integer as a number; an nn::Error for a missing entry, one of
  /// another type, or an infinity or NaN.
  void read(const std::string& key, double& out, const std::string& who) const;
  /// Reads a number as the double overload does, then as a float; an nn::Error for one beyond a
  /// float's range.
  void read(const std::string& key, float& out, const std::string& who) const;
  /// Reads text; an nn::Error naming `who` for a missing entry or one of another type.
  void read(const std::string& key, std::string& out, const std::string& who) const;
  /// Reads a list of integers; an nn::Error naming `who` for a missing entry or one of another type.
  void read(const std::string& key, std::vector<int64_t>& out, const std::string& who) const;

 private:
  const Value* find(const std::string& key) const;
  const Value& get(const std::string& key, const std::string& who) const;

  std::vector<std::pair<std::string, Value>> values_;
};

/// "true", "10", "0.5", "'cpu:0'", "[1, 2]": a value as written in messages and descriptions.
std::string toString(const Config::Value& value);

}  // namespace nn

// Config: the constructor arguments of a module, by name. clone() and nn::load rebuild
// a module from its type name and Config alone, and nn::save writes it into the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nn {

class Config {
 public:
  struct Value {
    bool isList = false;
    std::vector<double> numbers;
    /// Set for text entries (device names, say); numbers is then empty.
    bool isText = false;
    std::string text;
  };

  Config& set(const std::string& key, double value);
  Config& set(const std::string& key, const std::vector<int64_t>& values);
  Config& set(const std::string& key, const std::string& text);

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  double number(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  bool flag(const std::string& key) const { return number(key) != 0; }
  std::vector<int64_t> integers(const std::string& key) const;
  const std::string& text(const std::string& key) const;

  const std::map<std::string, Value>& values() const { return values_; }
  void setValue(const std::string& key, Value value) { values_[key] = std::move(value); }

 private:
  const Value& get(const std::string& key, bool list) const;
  std::map<std::string, Value> values_;
};

}  // namespace nn

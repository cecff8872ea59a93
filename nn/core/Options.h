// Options: a module's constructor arguments written once, as a struct whose fields one
// member template visits (PyTorch C++'s options structs):
//
//   struct LinearOptions {
//     int64_t inputSize = 0;
//     int64_t outputSize = 0;
//     bool bias = true;
//     template <typename F> void visit(F&& field) {
//       field("inputSize", inputSize);
//       field("outputSize", outputSize);
//       field("bias", bias);
//     }
//   };
//
// A module that derives from WithOptions<Options> gets from that one description its
// options(), config() (what nn::save writes and clone() and nn::load rebuild from), its
// registration's create() (NN_REGISTER_MODULE) and a default toString() that lists the fields;
// a module whose Torch7 print differs writes its own toString() from options(). Fields may be
// bool, int, int64_t, float, double, std::string, std::vector<int64_t>, a type with a
// FieldCodec (std::vector<Device> below; an enum), or a nested struct with a visit() of its
// own. A field added after files were written is visited as field("name", value,
// DefaultIfAbsent{}): such files load with its default.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "nn/core/Config.h"
#include "nn/core/Module.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Error.h"

namespace nn {

/// Marks a field that files written before it existed lack (see the top of this file).
struct DefaultIfAbsent {};

/// How a field of a type that Config holds no value of is written and read: a specialization,
/// next to the type, with
///   static Config::Value write(const T& value);
///   static T read(const Config& config, const std::string& key, const std::string& who);
/// where read names `who` in an nn::Error for an entry that is no T.
template <typename T>
struct FieldCodec {};

/// A list of devices as one text, "cpu:0,cpu:1" ("" for none).
template <>
struct FieldCodec<std::vector<Device>> {
  /// The devices' names joined by commas: {cpu:0, cuda:1} as "cpu:0,cuda:1".
  static Config::Value write(const std::vector<Device>& devices);
  /// Parses entry `key` (text) back into devices, each checked to exist on this machine
  /// (Device::parse); an nn::Error naming `who` for an entry that is no text or names no device.
  static std::vector<Device> read(const Config& config, const std::string& key, const std::string& who);
};

namespace options_detail {

template <typename T, typename = void>
constexpr bool kCoded = false;
template <typename T>
constexpr bool kCoded<T, std::void_t<decltype(&FieldCodec<T>::write)>> = true;

// A field that is an options struct of its own: any class but the value types of Config and
// the types with a FieldCodec.
template <typename T>
constexpr bool kNested =
    std::is_class_v<T> && !std::is_same_v<T, std::string> && !std::is_same_v<T, std::vector<int64_t>> && !kCoded<T>;

// Calls f(name, field, mayBeAbsent) for each leaf field of `options`, descending into nested
// option structs.
template <typename Options, typename F>
void forEachField(Options& options, F& f) {
  options.visit([&](const char* name, auto& field, auto... marks) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (kNested<Field>)
      forEachField(field, f);
    else
      f(name, field, sizeof...(marks) > 0);
  });
}

}  // namespace options_detail

/// Every field of `options` by name, typed (floats as doubles).
template <typename Options>
Config toConfig(Options options) {
  Config config;
  auto write = [&](const char* name, const auto& field, bool) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (options_detail::kCoded<Field>)
      config.set(name, FieldCodec<Field>::write(field));
    else if constexpr (std::is_same_v<Field, bool>)
      config.set(name, Config::Value(field));
    else if constexpr (std::is_integral_v<Field>)
      config.set(name, Config::Value(static_cast<int64_t>(field)));
    else if constexpr (std::is_floating_point_v<Field>)
      config.set(name, Config::Value(static_cast<double>(field)));
    else
      config.set(name, Config::Value(field));
  };
  options_detail::forEachField(options, write);
  return config;
}

/// The options of a Config: every field read by its name and type. An nn::Error naming `who`
/// for a missing entry, an entry of another type, or an entry no field has.
template <typename Options>
Options fromConfig(const Config& config, const std::string& who) {
  Options options;
  std::vector<std::string> names;
  auto read = [&](const char* name, auto& field, bool mayBeAbsent) {
    using Field = std::decay_t<decltype(field)>;
    names.emplace_back(name);
    if (mayBeAbsent && !config.has(name)) return;
    if constexpr (options_detail::kCoded<Field>)
      field = FieldCodec<Field>::read(config, name, who);
    else
      config.read(name, field, who);
  };
  options_detail::forEachField(options, read);
  for (const auto& entry : config.values()) {
    bool known = false;
    for (const std::string& n : names) known = known || n == entry.first;
    NN_CHECK(known, who << ": unknown config entry '" << entry.first << "'");
  }
  return options;
}

/// "inputSize=800, outputSize=500, bias=true"
template <typename Options>
std::string describe(const Options& options) {
  std::string out;
  const Config config = toConfig(options);
  for (const auto& [name, value] : config.values()) out += (out.empty() ? "" : ", ") + name + "=" + toString(value);
  return out;
}

/// The options-struct side of a module (see the top of this file). Base is Module or an
/// intermediate base class of the module's.
template <typename OptionsT, typename Base = Module>
class WithOptions : public Base {
 public:
  /// The module's options struct (LinearOptions for Linear): `nn::Linear::Options{784, 100}`.
  using Options = OptionsT;

  /// The arguments the module was made with.
  const Options& options() const { return options_; }
  /// Every field of options() by name (toConfig): what nn::save writes and clone() rebuilds from.
  Config config() const override { return toConfig(options_); }
  /// "nn.LeakyReLU(negval=0.01, inplace=false)"
  std::string toString() const override { return this->typeName() + "(" + describe(options_) + ")"; }

 protected:
  /// Keeps `options`; `baseArgs` go to Base's constructor.
  template <typename... BaseArgs>
  explicit WithOptions(const Options& options, BaseArgs&&... baseArgs)
      : Base(std::forward<BaseArgs>(baseArgs)...), options_(options) {}

  /// The arguments the module was made with (what options() returns); a setter of the module's
  /// (ceil(), setBufferPolicy()) changes its field, so that config() and clone() keep the change.
  Options options_;
};

namespace options_detail {

template <typename T, typename = void>
struct HasCreate : std::false_type {};
template <typename T>
struct HasCreate<T, std::void_t<decltype(&T::create)>> : std::true_type {};

template <typename T, typename = void>
struct HasOptions : std::false_type {};
template <typename T>
struct HasOptions<T, std::void_t<typename T::Options>> : std::true_type {};

}  // namespace options_detail

/// The factory NN_REGISTER_MODULE registers for T: T::create(config, children) where T has
/// one (containers, which take children), else T(options from config) where T has Options,
/// else T() for a module without arguments.
template <typename T>
ModulePtr createFromConfig(const std::string& typeName, const Config& config, std::vector<ModulePtr> children) {
  if constexpr (options_detail::HasCreate<T>::value) {
    return T::create(config, std::move(children));
  } else {
    NN_CHECK(children.empty(), typeName << ": expected no child modules, got " << children.size());
    if constexpr (options_detail::HasOptions<T>::value) {
      return std::make_shared<T>(fromConfig<typename T::Options>(config, typeName));
    } else {
      NN_CHECK(config.values().empty(),
               typeName << ": takes no arguments, got config entry '" << config.values()[0].first << "'");
      return std::make_shared<T>();
    }
  }
}

}  // namespace nn

/// In a module's .cpp: NN_REGISTER_MODULE(Linear) makes "nn.Linear" known to createModule
/// (clone, nn::load), built by nn::createFromConfig<Linear>.
#define NN_REGISTER_MODULE(Type) NN_REGISTER_MODULE_AS(Type, "nn." #Type)

/// NN_REGISTER_MODULE_AS(Shift, "my.Shift"): the same under a name of one's own, which the
/// module's typeName() returns.
#define NN_REGISTER_MODULE_AS(Type, name)                                                     \
  static const ::nn::ModuleRegistration NN_OPTIONS_CONCAT(nn_module_registration_, __LINE__)( \
      name, [](const ::nn::Config& config, std::vector<::nn::ModulePtr> children) {           \
        return ::nn::createFromConfig<Type>(name, config, std::move(children));               \
      })
#define NN_OPTIONS_CONCAT_(a, b) a##b
#define NN_OPTIONS_CONCAT(a, b) NN_OPTIONS_CONCAT_(a, b)

// nn/core/Options.h: a module's arguments written once, as an options struct, give its config(),
// its create() and (by default) its toString(), with typed values.
#include "nn/core/Options.h"

#include <catch2/catch.hpp>
#include <memory>
#include <variant>

#include "nn/nn.h"

using nn::Config;

namespace {

// A module of a test's own with every kind of field and a nested options struct.
struct InnerOptions {
  int64_t width = 3;
  bool flag = false;

  template <typename F>
  void visit(F&& field) {
    field("width", width);
    field("flag", flag);
  }
};

struct ProbeOptions {
  int count = 2;
  float rate = 0.25f;
  double scale = 1.5;
  std::string name = "probe";
  std::vector<int64_t> sizes{4, 5};
  InnerOptions inner;
  bool late = true;

  template <typename F>
  void visit(F&& field) {
    field("count", count);
    field("rate", rate);
    field("scale", scale);
    field("name", name);
    field("sizes", sizes);
    field("inner", inner);
    field("late", late, nn::DefaultIfAbsent{});
  }
};

class Probe : public nn::WithOptions<ProbeOptions> {
 public:
  explicit Probe(const Options& options) : WithOptions(options) {}
  const nn::Tensor& updateOutput(const nn::Tensor& input) override { return output.set_(input); }
  const nn::Tensor& updateGradInput(const nn::Tensor&, const nn::Tensor& g) override { return gradInput.set_(g); }
  std::string typeName() const override { return "test.Probe"; }
};

NN_REGISTER_MODULE_AS(Probe, "test.Probe");

template <typename T>
bool holds(const Config& c, const std::string& key) {
  for (const auto& [k, v] : c.values())
    if (k == key) return std::holds_alternative<T>(v);
  return false;
}

}  // namespace

TEST_CASE("an options struct gives config() with typed values, fields in their order", "[Options]") {
  ProbeOptions o;
  o.count = 7;
  o.inner.width = 9;
  const Config c = Probe(o).config();
  std::vector<std::string> keys;
  for (const auto& entry : c.values()) keys.push_back(entry.first);
  // The nested struct's fields in place of it, by their own names.
  CHECK(keys == std::vector<std::string>{"count", "rate", "scale", "name", "sizes", "width", "flag", "late"});
  CHECK(holds<int64_t>(c, "count"));
  CHECK(holds<double>(c, "rate"));
  CHECK(holds<std::string>(c, "name"));
  CHECK(holds<std::vector<int64_t>>(c, "sizes"));
  CHECK(holds<int64_t>(c, "width"));
  CHECK(holds<bool>(c, "flag"));
  // The library's modules: integers stay integers, flags flags, fractions numbers, lists lists.
  const Config linear = nn::Linear(3, 4, false).config();
  CHECK(holds<int64_t>(linear, "inputSize"));
  CHECK(holds<bool>(linear, "bias"));
  CHECK(holds<double>(nn::Dropout(0.3f).config(), "p"));
  CHECK(holds<std::vector<int64_t>>(nn::View({-1, 8}).config(), "sizes"));
  CHECK(holds<bool>(nn::SpatialAveragePooling(2, 2).config(), "ceilMode"));
}

TEST_CASE("create() and clone() rebuild a module from its options alone", "[Options]") {
  ProbeOptions o;
  o.count = -4;
  o.rate = 0.125f;
  o.name = "other";
  o.sizes = {};
  o.inner.flag = true;
  o.late = false;
  const auto copy = std::dynamic_pointer_cast<Probe>(nn::createModule("test.Probe", Probe(o).config()));
  REQUIRE(copy);
  CHECK(copy->options().count == -4);
  CHECK(copy->options().rate == 0.125f);
  CHECK(copy->options().scale == 1.5);
  CHECK(copy->options().name == "other");
  CHECK(copy->options().sizes.empty());
  CHECK(copy->options().inner.flag);
  CHECK_FALSE(copy->options().late);
  const auto clone = std::dynamic_pointer_cast<Probe>(copy->clone());
  REQUIRE(clone);
  CHECK(clone->config().values() == copy->config().values());
  // A field marked DefaultIfAbsent may be missing (files written before it existed); the others not.
  Config old = Probe(ProbeOptions{}).config();
  Config without;
  for (const auto& [k, v] : old.values())
    if (k != "late") without.set(k, v);
  CHECK(std::dynamic_pointer_cast<Probe>(nn::createModule("test.Probe", without))->options().late);
  Config missing;
  for (const auto& [k, v] : old.values())
    if (k != "width") missing.set(k, v);
  CHECK_THROWS_WITH(nn::createModule("my.Unregistered", Config()),
                    Catch::Contains("unknown module type 'my.Unregistered'") &&
                        Catch::Contains("NN_REGISTER_MODULE_AS(Type, \"my.Unregistered\")"));
  CHECK_THROWS_WITH(nn::createModule("test.Probe", missing),
                    Catch::Contains("test.Probe: config entry 'width' is missing"));
  CHECK_THROWS_WITH(nn::createModule("test.Probe", Config(old).set("extra", 1)),
                    Catch::Contains("test.Probe: unknown config entry 'extra'"));
  CHECK_THROWS_WITH(nn::createModule("test.Probe", Config(old).set("count", 2.5)),
                    Catch::Contains("config entry 'count': expected an integer, got a number 2.5"));
  // A float field takes an integer; a flag takes 0 and 1, as files of earlier versions hold them.
  const auto lenient =
      std::dynamic_pointer_cast<Probe>(nn::createModule("test.Probe", Config(old).set("rate", 2).set("flag", 1)));
  CHECK(lenient->options().rate == 2.f);
  CHECK(lenient->options().inner.flag);
}

TEST_CASE("the default toString() lists the options; Torch7's prints stay where Torch7 had one", "[Options]") {
  CHECK(Probe(ProbeOptions{}).toString() ==
        "test.Probe(count=2, rate=0.25, scale=1.5, name='probe', sizes=[4, 5], width=3, flag=false, late=true)");
  CHECK(nn::Linear(800, 500).toString() == "nn.Linear(800 -> 500)");
  CHECK(nn::ReLU(true).toString() == "nn.ReLU(true)");
  CHECK(nn::BatchNormalization(20, 1e-3f).toString() == "nn.BatchNormalization(20, eps=0.001)");
}

namespace {

// A field type Config holds no value of, written through a FieldCodec of the test's own.
enum class Shade { Light, Dark };

}  // namespace

template <>
struct nn::FieldCodec<Shade> {
  static Config::Value write(Shade shade) { return std::string(shade == Shade::Dark ? "dark" : "light"); }
  static Shade read(const Config& config, const std::string& key, const std::string& who) {
    std::string text;
    config.read(key, text, who);
    NN_CHECK(text == "light" || text == "dark", who << ": expected " << key << " light or dark, got '" << text << "'");
    return text == "dark" ? Shade::Dark : Shade::Light;
  }
};

namespace {

struct CodedOptions {
  Shade shade = Shade::Light;
  std::vector<nn::Device> devices;

  template <typename F>
  void visit(F&& field) {
    field("shade", shade);
    field("devices", devices);
  }
};

}  // namespace

TEST_CASE("a field of a type with a FieldCodec (an enum, a list of devices) is written and read by it", "[Options]") {
  CodedOptions o;
  o.shade = Shade::Dark;
  o.devices = {nn::Device::cpu(1), nn::Device::cpu(0)};
  const Config c = nn::toConfig(o);
  CHECK(c.values() == Config().set("shade", "dark").set("devices", "cpu:1,cpu:0").values());
  CHECK(nn::describe(o) == "shade='dark', devices='cpu:1,cpu:0'");
  const CodedOptions back = nn::fromConfig<CodedOptions>(c, "test.Coded");
  CHECK(back.shade == Shade::Dark);
  CHECK(back.devices == o.devices);
  // No devices are "".
  CHECK(nn::fromConfig<CodedOptions>(nn::toConfig(CodedOptions{}), "test.Coded").devices.empty());
  CHECK_THROWS_WITH(nn::fromConfig<CodedOptions>(Config(c).set("shade", "grey"), "test.Coded"),
                    Catch::Contains("test.Coded: expected shade light or dark, got 'grey'"));
  CHECK_THROWS_WITH(nn::fromConfig<CodedOptions>(Config(c).set("devices", 3), "test.Coded"),
                    Catch::Contains("test.Coded: config entry 'devices': expected text, got an integer 3"));
  CHECK_THROWS_WITH(nn::fromConfig<CodedOptions>(Config(c).set("devices", "cpu:0,gpu"), "test.Coded"),
                    Catch::Contains("expected a device like cpu:0 or cuda:1, got 'gpu'"));
}

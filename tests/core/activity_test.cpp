// nn::Activity and nn::Table: implicit conversions from a tensor and from a table, nesting,
// checked access with errors that say what was there, copies (tensors shared, lists copied)
// and descriptions.
#include "nn/core/Activity.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nn/modules/Identity.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/tensor/Error.h"

using nn::Activity;
using nn::Table;
using nn::Tensor;

namespace {

// A function taking an activity, as a module's forward will: tensors and tables both convert.
std::string kindOf(const Activity& a) { return a.isTensor() ? "tensor " + a.describe() : "table " + a.describe(); }

}  // namespace

TEST_CASE("a tensor and a table of tensors both pass as an Activity", "[Activity]") {
  const Tensor x = Tensor::zeros({2, 3}), y = Tensor::zeros({4});
  CHECK(kindOf(x) == "tensor [2, 3]");
  CHECK(kindOf(Table{x, y}) == "table {[2, 3], [4]}");
  // Nested tables, as Torch7's.
  const Activity nested = Table{x, Table{y, Table{}}};
  CHECK(nested.isTable());
  CHECK(nested.size() == 2);
  CHECK(nested[0].isTensor());
  CHECK(nested[1].size() == 2);
  CHECK(nested[1][1].isTable());
  CHECK(nested[1][1].size() == 0);
  CHECK(nested.describe() == "{[2, 3], {[4], {}}}");
  // The items are the tensors given: handles to the same data.
  CHECK(nested[1][0].tensor().rawData() == y.rawData());
  // The default is an empty tensor.
  CHECK(Activity().isTensor());
}

TEST_CASE("an Activity's tensor and table are checked, the error saying what is there", "[Activity]") {
  Activity tensor = Tensor::zeros({2, 3});
  Activity table = Table{Tensor::zeros({1}), Tensor::zeros({5, 2})};
  REQUIRE_THROWS_WITH(table.tensor(), Catch::Contains("expected a tensor") && Catch::Contains("{[1], [5, 2]}"));
  REQUIRE_THROWS_WITH(tensor.table(), Catch::Contains("expected a table") && Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(tensor.size(), Catch::Contains("expected a table"));
  REQUIRE_THROWS_WITH(tensor[0], Catch::Contains("expected a table"));
  REQUIRE_THROWS_WITH(table[2], Catch::Contains("no item 2") && Catch::Contains("table of 2"));
  const Activity& constant = table;
  REQUIRE_THROWS_WITH(constant[5], Catch::Contains("no item 5"));
}

TEST_CASE("copies of an Activity share its tensors and copy its lists", "[Activity]") {
  Tensor x = Tensor::zeros({3});
  Activity table = Table{x};
  Activity copy = table;
  // The tensor is shared: a change through one handle shows in the other.
  copy[0].tensor().fill_(2);
  CHECK(table[0].tensor().toVector() == std::vector<float>{2, 2, 2});
  // The list is not: an item added to the copy is the copy's alone.
  copy.table().push_back(Tensor::zeros({1}));
  CHECK(copy.size() == 2);
  CHECK(table.size() == 1);
  // A table refilled in place keeps its items' places.
  table.table().resize(3);
  CHECK(table.size() == 3);
  CHECK(table[2].isTensor());
  table[2] = Table{x};
  CHECK(table[2].isTable());
  table.table().resize(1);
  CHECK(table.describe() == "{[3]}");
}

namespace {

// `x` inside `depth` tables of one item each, built by moves (a copy that deep is refused).
Activity nestedIn(const Tensor& x, size_t depth) {
  Activity a = x;
  for (size_t i = 0; i < depth; ++i) {
    Table t;
    t.push_back(std::move(a));
    a = Activity(std::move(t));
  }
  return a;
}

}  // namespace

TEST_CASE("tables nested 100,000 and 1,000,000 deep are destroyed and described; copies and walks refuse them",
          "[Activity]") {
  const Tensor x = Tensor::zeros({2});
  for (size_t depth : {size_t{100000}, size_t{1000000}}) {
    CAPTURE(depth);
    Activity deep = nestedIn(x, depth);
    // Described to 16 levels, without walking the rest.
    CHECK(deep.describe() == std::string(16, '{') + "{...}" + std::string(16, '}'));
    // Each refusal says how deep tables may nest.
    const std::string bound = "nested at most 1000 deep";
    CHECK_THROWS_WITH(Activity(deep), Catch::Contains("cannot copy tables nested more than 1000 deep"));
    Activity target = Tensor::zeros({1});
    CHECK_THROWS_WITH(target = deep, Catch::Contains("cannot copy tables nested more than 1000 deep"));
    CHECK_THROWS_WITH(nn::sameShape(deep, deep), Catch::Contains("nn::sameShape") && Catch::Contains(bound));
    std::vector<Tensor> tensors;
    CHECK_THROWS_WITH(nn::collectTensors(deep, tensors),
                      Catch::Contains("nn::collectTensors") && Catch::Contains(bound));
    CHECK_THROWS_WITH(nn::copyActivity(target, deep), Catch::Contains("nn::copyActivity") && Catch::Contains(bound));
    CHECK_THROWS_WITH(nn::zeroActivity(target, deep), Catch::Contains("nn::zeroActivity") && Catch::Contains(bound));
    CHECK_THROWS_WITH(nn::sharesStorage(deep, x), Catch::Contains("nn::sharesStorage") && Catch::Contains(bound));
    CHECK_THROWS_WITH(nn::checkActivityDepth(deep, "test"), Catch::StartsWith("test: ") && Catch::Contains(bound));
    // Then destroyed at the end of the loop: iteratively, at any depth.
  }
  // At the bound, every walk works.
  const Activity deepest = nestedIn(x, nn::kMaxActivityDepth);
  const Activity copy = deepest;
  CHECK(nn::sameShape(copy, deepest));
  std::vector<Tensor> tensors;
  nn::collectTensors(copy, tensors);
  REQUIRE(tensors.size() == 1);
  CHECK(tensors[0].is(x));
  CHECK_NOTHROW(nn::checkActivityDepth(deepest, "test"));
  const Activity deeper = nestedIn(x, nn::kMaxActivityDepth + 1);
  CHECK_THROWS_WITH(Activity(deeper), Catch::Contains("cannot copy tables nested more than 1000 deep"));
}

TEST_CASE("DataParallelTable refuses an input of tables nested 100,000 deep with an nn::Error", "[Activity]") {
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(std::make_shared<nn::Identity>(), {nn::Device::cpu(0), nn::Device::cpu(1)});
  const Activity deep = nestedIn(Tensor::zeros({4, 2}), 100000);
  CHECK_THROWS_WITH(table->forward(deep),
                    Catch::Contains("nn.DataParallelTable: the input") && Catch::Contains("nested at most 1000 deep"));
  // The table stays usable.
  const Activity shallow = nestedIn(Tensor::zeros({4, 2}), 3);
  CHECK(table->forward(shallow).describe() == "{{{[4, 2]}}}");
}

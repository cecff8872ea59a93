// nn::Activity and nn::Table: implicit conversions from a tensor and from a table, nesting,
// checked access with errors that say what was there, copies (tensors shared, lists copied)
// and descriptions.
#include "nn/Activity.h"

#include <catch2/catch.hpp>

#include "nn/Error.h"

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

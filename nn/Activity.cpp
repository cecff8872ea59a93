// nn::Activity and nn::Table: access with checks, and descriptions for messages.
#include "nn/Activity.h"

#include "nn/Error.h"

namespace nn {

Table::Table(std::initializer_list<Activity> items) : items_(items) {}

Table::Table(std::vector<Activity> items) : items_(std::move(items)) {}

const Activity& Table::operator[](size_t i) const {
  NN_CHECK(i < items_.size(), "nn.Table: no item " << i << " in a table of " << items_.size());
  return items_[i];
}

Activity& Table::operator[](size_t i) {
  NN_CHECK(i < items_.size(), "nn.Table: no item " << i << " in a table of " << items_.size());
  return items_[i];
}

void Table::push_back(Activity item) { items_.push_back(std::move(item)); }

void Table::resize(size_t n) { items_.resize(n); }

const Tensor& Activity::tensor() const {
  NN_CHECK(!isTable_, "nn.Activity: expected a tensor, got the table " << describe());
  return tensor_;
}

Tensor& Activity::tensor() {
  NN_CHECK(!isTable_, "nn.Activity: expected a tensor, got the table " << describe());
  return tensor_;
}

const Table& Activity::table() const {
  NN_CHECK(isTable_, "nn.Activity: expected a table, got a tensor of size " << tensor_.shapeString());
  return table_;
}

Table& Activity::table() {
  NN_CHECK(isTable_, "nn.Activity: expected a table, got a tensor of size " << tensor_.shapeString());
  return table_;
}

std::string Activity::describe() const {
  if (!isTable_) return tensor_.shapeString();
  std::string s = "{";
  for (const Activity& item : table_) s += (s.size() > 1 ? ", " : "") + item.describe();
  return s + "}";
}

}  // namespace nn

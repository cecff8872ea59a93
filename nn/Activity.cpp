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

Table& Activity::setTable(size_t n) {
  if (!isTable_) {
    isTable_ = true;
    tensor_ = Tensor();
  }
  table_.resize(n);
  return table_;
}

Tensor& Activity::setTensor() {
  if (isTable_) {
    isTable_ = false;
    table_ = Table();
  }
  return tensor_;
}

void Activity::shareTensor(const Tensor& t) {
  if (!isTable_ && tensor_.is(t)) return;
  setTensor() = t;
}

bool sameShape(const Activity& a, const Activity& b) {
  if (a.isTensor()) return b.isTensor() && a.tensor().sizes() == b.tensor().sizes();
  if (!b.isTable() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameShape(a[i], b[i])) return false;
  return true;
}

void collectTensors(const Activity& a, std::vector<Tensor>& out) {
  if (a.isTensor()) {
    out.push_back(a.tensor());
    return;
  }
  for (const Activity& item : a.table()) collectTensors(item, out);
}

void copyActivity(Activity& into, const Activity& src) {
  if (src.isTensor()) {
    into.setTensor().resizeAs_(src.tensor()).copy_(src.tensor());
    return;
  }
  Table& t = into.setTable(src.size());
  for (size_t i = 0; i < src.size(); ++i) copyActivity(t[i], src[i]);
}

void addActivity(Activity& into, const Activity& src) {
  NN_CHECK(sameShape(into, src), "nn::addActivity: expected " << into.describe() << ", got " << src.describe());
  if (src.isTensor()) {
    into.tensor().add_(src.tensor().contiguous());
    return;
  }
  for (size_t i = 0; i < src.size(); ++i) addActivity(into[i], src[i]);
}

bool sharesStorage(const Activity& a, const Activity& b) {
  if (!a.isTensor()) {
    for (const Activity& item : a.table())
      if (sharesStorage(item, b)) return true;
    return false;
  }
  if (!b.isTensor()) {
    for (const Activity& item : b.table())
      if (sharesStorage(a, item)) return true;
    return false;
  }
  return a.tensor().storage() != nullptr && a.tensor().storage() == b.tensor().storage();
}

void sumActivity(Activity& into, const Activity& a, const Activity& b) {
  NN_CHECK(sameShape(a, b), "nn::sumActivity: expected " << a.describe() << ", got " << b.describe());
  if (a.isTensor()) {
    into.setTensor().add_(a.tensor().contiguous(), b.tensor().contiguous());
    return;
  }
  Table& t = into.setTable(a.size());
  for (size_t i = 0; i < a.size(); ++i) sumActivity(t[i], a[i], b[i]);
}

void zeroActivity(Activity& into, const Activity& like) {
  if (like.isTensor()) {
    into.setTensor().resizeAs_(like.tensor()).zero_();
    return;
  }
  Table& t = into.setTable(like.size());
  for (size_t i = 0; i < like.size(); ++i) zeroActivity(t[i], like[i]);
}

std::string Activity::describe() const {
  if (!isTable_) return tensor_.shapeString();
  std::string s = "{";
  for (const Activity& item : table_) s += (s.size() > 1 ? ", " : "") + item.describe();
  return s + "}";
}

}  // namespace nn

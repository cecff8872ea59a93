// nn::Activity and nn::Table: access with checks, and descriptions for messages.
#include "nn/core/Activity.h"

#include "nn/tensor/Error.h"

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

Activity::Activity(const Activity& other) { assign(other, 0); }

Activity& Activity::operator=(const Activity& other) {
  if (this != &other) assign(other, 0);
  return *this;
}

void Activity::assign(const Activity& other, size_t depth) {
  if (!other.isTable_) {
    Tensor t = other.tensor_;  // before setTensor(), which may drop the table that holds `other`
    setTensor() = std::move(t);
    return;
  }
  NN_CHECK(depth < kMaxActivityDepth,
           "nn.Activity: cannot copy tables nested more than " << kMaxActivityDepth << " deep");
  setTable(other.table_.size());
  for (size_t i = 0; i < other.table_.size(); ++i) table_.items_[i].assign(other.table_.items_[i], depth + 1);
}

Activity::~Activity() {
  if (!isTable_) return;
  // The tables below are moved into a list and taken apart one at a time: destroying a table
  // nested any depth deep recurses one level at most.
  std::vector<Activity> pending;
  const auto takeTables = [&pending](Table& t) {
    for (Activity& item : t.items_)
      if (item.isTable_ && !item.table_.items_.empty()) pending.push_back(std::move(item));
  };
  takeTables(table_);
  while (!pending.empty()) {
    Activity a = std::move(pending.back());
    pending.pop_back();
    takeTables(a.table_);
  }
}

namespace {

// The walks below recurse a call per table; `depth` counts the tables above the one entered.
void checkDepth(size_t depth, const char* who) {
  NN_CHECK(depth < kMaxActivityDepth,
           who << ": expected tables nested at most " << kMaxActivityDepth << " deep, got one nested deeper");
}

bool withinDepth(const Activity& a, size_t depth) {
  if (a.isTensor()) return true;
  if (depth >= kMaxActivityDepth) return false;
  for (const Activity& item : a.table())
    if (!withinDepth(item, depth + 1)) return false;
  return true;
}

bool sameShapeAt(const Activity& a, const Activity& b, size_t depth) {
  if (a.isTensor()) return b.isTensor() && a.tensor().sizes() == b.tensor().sizes();
  if (!b.isTable() || a.size() != b.size()) return false;
  checkDepth(depth, "nn::sameShape");
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameShapeAt(a[i], b[i], depth + 1)) return false;
  return true;
}

void collectTensorsAt(const Activity& a, std::vector<Tensor>& out, size_t depth) {
  if (a.isTensor()) {
    out.push_back(a.tensor());
    return;
  }
  checkDepth(depth, "nn::collectTensors");
  for (const Activity& item : a.table()) collectTensorsAt(item, out, depth + 1);
}

void copyActivityAt(Activity& into, const Activity& src, size_t depth) {
  if (src.isTensor()) {
    into.setTensor().resizeAs_(src.tensor()).copy_(src.tensor());
    return;
  }
  checkDepth(depth, "nn::copyActivity");
  Table& t = into.setTable(src.size());
  for (size_t i = 0; i < src.size(); ++i) copyActivityAt(t[i], src[i], depth + 1);
}

void addActivityAt(Activity& into, const Activity& src, size_t depth) {
  if (src.isTensor()) {
    into.tensor().add_(src.tensor().contiguous());
    return;
  }
  for (size_t i = 0; i < src.size(); ++i) addActivityAt(into[i], src[i], depth + 1);
}

// `depthA` and `depthB` count the tables above a and above b.
bool sharesStorageAt(const Activity& a, const Activity& b, size_t depthA, size_t depthB) {
  if (!a.isTensor()) {
    checkDepth(depthA, "nn::sharesStorage");
    for (const Activity& item : a.table())
      if (sharesStorageAt(item, b, depthA + 1, depthB)) return true;
    return false;
  }
  if (!b.isTensor()) {
    checkDepth(depthB, "nn::sharesStorage");
    for (const Activity& item : b.table())
      if (sharesStorageAt(a, item, depthA, depthB + 1)) return true;
    return false;
  }
  return a.tensor().storage() != nullptr && a.tensor().storage() == b.tensor().storage();
}

void sumActivityAt(Activity& into, const Activity& a, const Activity& b, size_t depth) {
  if (a.isTensor()) {
    into.setTensor().add_(a.tensor().contiguous(), b.tensor().contiguous());
    return;
  }
  Table& t = into.setTable(a.size());
  for (size_t i = 0; i < a.size(); ++i) sumActivityAt(t[i], a[i], b[i], depth + 1);
}

void zeroActivityAt(Activity& into, const Activity& like, size_t depth) {
  if (like.isTensor()) {
    into.setTensor().resizeAs_(like.tensor()).zero_();
    return;
  }
  checkDepth(depth, "nn::zeroActivity");
  Table& t = into.setTable(like.size());
  for (size_t i = 0; i < like.size(); ++i) zeroActivityAt(t[i], like[i], depth + 1);
}

}  // namespace

void checkActivityDepth(const Activity& a, const char* who) {
  NN_CHECK(withinDepth(a, 0),
           who << ": expected tables nested at most " << kMaxActivityDepth << " deep, got " << a.describe());
}

bool sameShape(const Activity& a, const Activity& b) { return sameShapeAt(a, b, 0); }

void collectTensors(const Activity& a, std::vector<Tensor>& out) { collectTensorsAt(a, out, 0); }

void copyActivity(Activity& into, const Activity& src) { copyActivityAt(into, src, 0); }

void addActivity(Activity& into, const Activity& src) {
  // sameShape bounds the depth that the walk then takes.
  NN_CHECK(sameShape(into, src), "nn::addActivity: expected " << into.describe() << ", got " << src.describe());
  addActivityAt(into, src, 0);
}

bool sharesStorage(const Activity& a, const Activity& b) { return sharesStorageAt(a, b, 0, 0); }

void sumActivity(Activity& into, const Activity& a, const Activity& b) {
  NN_CHECK(sameShape(a, b), "nn::sumActivity: expected " << a.describe() << ", got " << b.describe());
  sumActivityAt(into, a, b, 0);
}

void zeroActivity(Activity& into, const Activity& like) { zeroActivityAt(into, like, 0); }

std::string Activity::describe() const {
  std::string s;
  describeInto(s, 0);
  return s;
}

void Activity::describeInto(std::string& s, size_t depth) const {
  if (!isTable_) {
    s += tensor_.shapeString();
    return;
  }
  // A message needs the first levels; a deeper table would make it long and the walk deep.
  constexpr size_t kShownDepth = 16;
  if (depth >= kShownDepth && !table_.empty()) {
    s += "{...}";
    return;
  }
  s += "{";
  for (size_t i = 0; i < table_.size(); ++i) {
    if (i > 0) s += ", ";
    table_.items_[i].describeInto(s, depth + 1);
  }
  s += "}";
}

}  // namespace nn

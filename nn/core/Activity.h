// nn::Activity and nn::Table: what flows between modules in Torch7, "a Tensor or a table of
// Tensors". An Activity holds a Tensor or a Table; a Table is an ordered list of activities,
// nested as deep as needed: nn::Table{x, nn::Table{y, z}}. Both convert implicitly to an
// Activity, so code that passes tensors passes activities.
//
// Copies: the tensors are handles (a copy shares the tensor, as nn::Tensor's copies do), the
// lists are values (a copy of a Table is a new list of the same handles). A module keeps the
// activities it returns and refills them, so that a steady step allocates nothing.
//
// Modules pass activities to one another (Note [Tensors and activities] in nn/core/Module.h).
//
// Depth: tables nest at most kMaxActivityDepth deep wherever they are copied or walked (the
// functions below, a copy, DataParallelTable), so that no walk recurses without bound: a deeper
// one is an nn::Error, as the module-tree reader's depth bound. Destruction alone accepts any
// depth (a table nested a million deep may be built by moving), and is iterative.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace nn {

class Activity;

/// How deep tables may nest where an activity is copied or walked.
constexpr size_t kMaxActivityDepth = 1000;

/// An ordered list of activities (Torch7's table, indexed from 0 here).
class Table {
 public:
  /// An empty table, `{}`.
  Table() = default;
  /// The given items in order: `nn::Table{x, y}` (the tensors shared, not copied).
  Table(std::initializer_list<Activity> items);
  /// The given items in order.
  explicit Table(std::vector<Activity> items);

  /// Number of items (Torch7's `#t`).
  size_t size() const { return items_.size(); }
  /// True for a table of no items.
  bool empty() const { return items_.empty(); }
  /// Item i; an nn::Error naming the index and the size where there is none.
  const Activity& operator[](size_t i) const;
  /// Item i, writable; an nn::Error naming the index and the size where there is none.
  Activity& operator[](size_t i);
  /// Appends an item (Torch7's table.insert(t, item)).
  void push_back(Activity item);
  /// Keeps the first n items, or adds empty tensors up to n.
  void resize(size_t n);

  /// The first item, for range-for loops: `for (const nn::Activity& item : table)`.
  std::vector<Activity>::const_iterator begin() const { return items_.begin(); }
  /// Past the last item.
  std::vector<Activity>::const_iterator end() const { return items_.end(); }

 private:
  friend class Activity;
  std::vector<Activity> items_;
};

/// What flows between modules: a tensor or a table of activities (see the top of this file).
class Activity {
 public:
  /// An empty tensor.
  Activity() = default;
  /// A handle of `tensor` (shares it; implicit, so a tensor passes where an activity is taken).
  Activity(Tensor tensor) : tensor_(std::move(tensor)) {}              // NOLINT: implicit, as a Torch7 value
  /// The table `table` (implicit, as from a tensor).
  Activity(Table table) : table_(std::move(table)), isTable_(true) {}  // NOLINT: likewise
  /// Shares the tensors and copies the lists; an nn::Error where tables nest deeper than
  /// kMaxActivityDepth.
  Activity(const Activity& other);
  /// Shares other's tensors and copies its lists, reusing this activity's own lists where it can;
  /// an nn::Error where tables nest deeper than kMaxActivityDepth.
  Activity& operator=(const Activity& other);
  /// Takes other's tensor or table; `other` is left valid but unspecified.
  Activity(Activity&&) noexcept = default;
  /// Takes other's tensor or table; `other` is left valid but unspecified.
  Activity& operator=(Activity&&) noexcept = default;
  /// Iterative: tables nested any depth deep.
  ~Activity();

  /// True where this holds a tensor (possibly empty), false for a table.
  bool isTensor() const { return !isTable_; }
  /// True where this holds a table.
  bool isTable() const { return isTable_; }
  /// The tensor; an nn::Error describing the table where this is one.
  const Tensor& tensor() const;
  /// The tensor, writable (assigning rebinds this activity's handle); an nn::Error for a table.
  Tensor& tensor();
  /// The table; an nn::Error naming the tensor's sizes where this is a tensor.
  const Table& table() const;
  /// The table, writable; an nn::Error naming the tensor's sizes where this is a tensor.
  Table& table();
  /// A table's number of items; an nn::Error for a tensor.
  size_t size() const { return table().size(); }
  /// A table's item i; an nn::Error for a tensor or an index past its end.
  const Activity& operator[](size_t i) const { return table()[i]; }
  /// A table's item i, writable; an nn::Error for a tensor or an index past its end.
  Activity& operator[](size_t i) { return table()[i]; }

  /// For messages: a tensor's sizes, "[2, 3]", a table's items in braces, "{[2, 3], {[4]}}";
  /// tables nested deeper than 16 as "{...}".
  std::string describe() const;

  /// Makes this a table of n items (those there are kept, empty tensors added) and returns
  /// it. A module refills its own results this way: a steady step allocates nothing.
  Table& setTable(size_t n);
  /// Makes this a tensor (the one it holds where it is one already) and returns it.
  Tensor& setTensor();
  /// Makes this a handle of `t`, unless it is one already: a module's activity that stands
  /// for its output or gradInput tensor. Allocates nothing.
  void shareTensor(const Tensor& t);

 private:
  // *this = other, where other lies `depth` tables below the copy's root.
  void assign(const Activity& other, size_t depth);
  void describeInto(std::string& s, size_t depth) const;

  Tensor tensor_;
  Table table_;
  bool isTable_ = false;
};

/// An nn::Error starting with `who` unless `a`'s tables nest at most kMaxActivityDepth deep;
/// iterative, so that it checks an activity of any depth before a walk recurses into it.
void checkActivityDepth(const Activity& a, const char* who);

/// True when a and b are alike: tables of the same lengths, nested alike, and tensors of the
/// same sizes where a has tensors.
bool sameShape(const Activity& a, const Activity& b);
/// Every tensor of `a`, depth first, appended to `out` (whose capacity a caller can reuse).
void collectTensors(const Activity& a, std::vector<Tensor>& out);

// The functions below write into `into`'s tensors: they must be its own (made by setTable and
// setTensor), not handles shared with another module's results.

/// into = a copy of src: src's tables, and tensors of its sizes and values on its devices.
void copyActivity(Activity& into, const Activity& src);
/// into += src, tensor by tensor; an nn::Error where they are not alike (sameShape).
void addActivity(Activity& into, const Activity& src);
/// Whether a tensor of a and one of b hold the same storage.
bool sharesStorage(const Activity& a, const Activity& b);
/// into = a + b, tensor by tensor (a's tables, tensors of its sizes on its devices): what
/// copyActivity(into, a) and addActivity(into, b) give, in one pass; an nn::Error where a and b
/// are not alike.
void sumActivity(Activity& into, const Activity& a, const Activity& b);
/// into = src's tables with zero tensors of its sizes, on its devices.
void zeroActivity(Activity& into, const Activity& like);

}  // namespace nn

// nn::NoSync: a scope in which a data-parallel table accumulates gradients without combining them
// across its devices or processes (PyTorch's `with ddp.no_sync():`), for all but the last of the
// micro-batches of one optimizer step: setSync(false) on the table, then its setting back.
#pragma once

namespace nn {

/// While it lives, `table` (a DataParallelTable or a DistributedDataParallelTable) does not
/// combine the gradients of its backward passes; the next backward after it combines all of them.
template <typename Table>
class NoSync {
 public:
  explicit NoSync(Table& table) : table_(table), previous_(table.sync()) { table_.setSync(false); }
  ~NoSync() { table_.setSync(previous_); }
  NoSync(const NoSync&) = delete;
  NoSync& operator=(const NoSync&) = delete;

 private:
  Table& table_;
  bool previous_;
};

}  // namespace nn

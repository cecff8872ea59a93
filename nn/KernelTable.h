// KernelTable<Table>: where the table of kernels of each device type is kept. A module's
// kernels are a struct of plain function pointers (Torch7's THNN / THCUNN: one name, one
// argument order on every device). nn holds the CPU tables itself; //cunn installs the CUDA
// tables here when it is linked, so nn calls CUDA kernels without including a CUDA header.
#pragma once

#include "nn/Device.h"
#include "nn/Error.h"

namespace nn {

template <typename Table>
class KernelTable {
 public:
  /// The table installed for `device`'s type; an nn::Error naming `what` where there is none.
  static const Table& of(const Device& device, const char* what) {
    const Table* table = slot(device.type());
    NN_CHECK(table != nullptr,
             "no " << what << " kernels for " << device.str() << ": the CUDA backend (//cunn) is not linked");
    return *table;
  }
  /// Installs the table of a device type (at static initialisation).
  static void install(DeviceType type, const Table& table) { slot(type) = &table; }

 private:
  static const Table*& slot(DeviceType type) {
    static const Table* tables[2] = {nullptr, nullptr};
    return tables[type == DeviceType::CPU ? 0 : 1];
  }
};

}  // namespace nn

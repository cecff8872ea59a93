// The argument checks shared by the CUDA communicators: distinct CUDA devices, and one
// tensor per device, in the communicator's order, all contiguous and of one size.
#pragma once

#include <vector>

#include "nn/Tensor.h"

namespace nn {

/// Throws an nn::Error naming `who` (e.g. "NcclCommunicator") unless `devices` are one or
/// more distinct CUDA devices that exist.
void checkCollectiveDevices(const std::vector<Device>& devices, const char* who);

/// Throws an nn::Error naming `who` (e.g. "NcclCommunicator.reduce") unless tensors[i] lives
/// on devices[i] for every i, and every tensor is contiguous with the sizes of tensors[0].
void checkCollectiveTensors(const std::vector<Tensor>& tensors, const std::vector<Device>& devices, const char* who);

}  // namespace nn

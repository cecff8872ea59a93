// The umbrella header of //cunn: multi-device training (DataParallelTable and its steps),
// device threads and the communicators. Includes nn/nn.h. Linking //cunn also links the CUDA
// backend where the build found a CUDA toolkit (nn/cuda).
#pragma once

#include "nn/backend/Communicator.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/DeviceThreads.h"
#include "nn/parallel/LendDeviceThreads.h"

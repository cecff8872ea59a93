// The umbrella header of //cunn: multi-device training (DataParallelTable and its steps),
// device threads and the communicators. Includes nn/nn.h. Linking //cunn also links the CUDA
// backend where the build found a CUDA toolkit (cunn/cuda).
#pragma once

#include "cunn/DataParallelSteps.h"
#include "cunn/DataParallelTable.h"
#include "cunn/DeviceThreads.h"
#include "nn/backend/Communicator.h"
#include "nn/nn.h"

// The umbrella header of //cunn: multi-device training (DataParallelTable), device threads
// and communication. Includes nn/nn.h.
#pragma once

#include "cunn/Communicator.h"
#include "cunn/DataParallelTable.h"
#include "cunn/DeviceThreads.h"
#include "cunn/HostCommunicator.h"
#include "nn/nn.h"

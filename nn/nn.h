// The umbrella header of //nn: tensors, devices, modules, criterions, optimizer, data, files.
#pragma once

#include "nn/Blas.h"
#include "nn/ClassNLLCriterion.h"
#include "nn/Config.h"
#include "nn/Container.h"
#include "nn/Criterion.h"
#include "nn/Device.h"
#include "nn/Error.h"
#include "nn/Linear.h"
#include "nn/Module.h"
#include "nn/Random.h"
#include "nn/ReLU.h"
#include "nn/Sequential.h"
#include "nn/Tensor.h"

// Checkpoints: a model, its optimizer's state and the data order in one safetensors file,
// so that a resumed run continues exactly as an uninterrupted one would.
//
// The file is an nn::save file (nn::load reads the model from it, other tools read every
// tensor) with the training state added: a tensor "training.NAME" for each state buffer NAME
// of the optimizer that has one ("training.momentum": SGD's velocity; "training.adam.m", ...),
// "training.permutation" (the data order of the epoch in progress), and metadata
// "training.optimizer" (its typeName(); files without it are SGD's), "training.steps" (its
// step count; "training.sgd_steps" in files of earlier versions), "training.epochs_done",
// "training.data_epoch",
// "training.data_position", "training.generator" (nn::defaultGenerator's state) and, for the
// epoch in progress, "training.epoch_loss_sum" and "training.epoch_steps" (files without them
// load with 0); with a learning-rate schedule, "training.scheduler" (its typeName()) and
// "training.scheduler.KEY" for each number of its state(); with an average of the weights,
// tensors "training.ema.parameters" and "training.ema.buffer.I" and metadata "training.ema.decay"
// and "training.ema.updates"; with a loss scaler, metadata "training.grad_scaler.scale" and
// "training.grad_scaler.growth_tracker" (files without them load, the scaler as it was).
#pragma once

#include <cstdint>
#include <string>

#include "nn/core/Module.h"
#include "nn/data/BatchIterator.h"
#include "nn/optim/ExponentialMovingAverage.h"
#include "nn/optim/GradScaler.h"
#include "nn/optim/LrScheduler.h"
#include "nn/optim/Optimizer.h"

namespace nn {

/// What a training loop needs to go on where it stopped.
struct TrainingState {
  /// The model whose parameters and buffers are saved (not owned; required).
  Module* model = nullptr;
  /// The optimizer over the model's parameters, whose step count and state buffers are saved (not owned;
  /// required; a checkpoint loads only into an optimizer of the type that saved it).
  Optimizer* optimizer = nullptr;
  /// The training data's iterator, whose epoch, position and order are saved (not owned; required).
  BatchIterator* batches = nullptr;
  /// Whole epochs finished.
  int64_t epochsDone = 0;
  /// The sum of the training losses and the number of steps of the epoch in progress, so that
  /// a run resumed in the middle of an epoch reports the loss of the whole epoch.
  double epochLossSum = 0.0;
  /// The steps of the epoch in progress that epochLossSum sums.
  int64_t epochSteps = 0;
  /// The learning-rate schedule over the optimizer, whose state is saved; none where null (not
  /// owned). A checkpoint resumes only into a run with a schedule of the same type, or none.
  LrScheduler* scheduler = nullptr;
  /// The average of the model's weights, saved; none where null (not owned). A checkpoint with
  /// one resumes only into a run with one of the same decay, and one without into a run without.
  ExponentialMovingAverage* average = nullptr;
  /// The loss scaler of float16 training, whose scale and growth tracker are saved; none where
  /// null (not owned). Restored where the file has them; a run without one ignores them.
  GradScaler* scaler = nullptr;
};

/// Writes model, optimizer and data order atomically to `path`.
void saveCheckpoint(const TrainingState& state, const std::string& path);
/// Restores model (all or nothing), optimizer, data order and the default generator from
/// `path` into `state`, and returns the epochs the file had finished. The model may be laid
/// out differently from the one saved (a DataParallelTable on other devices, or none) as
/// long as its parameters have the same names and shapes.
int64_t loadCheckpoint(TrainingState& state, const std::string& path);

}  // namespace nn

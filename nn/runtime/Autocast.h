// nn::Autocast: a scope of mixed precision, as PyTorch's torch.autocast. Inside it the products of
// the modules that profit from narrower operands (Linear, the convolutions, and their backward
// passes: every product that goes through the GEMM routes of a backend) run on bfloat16 or
// float16 operands with float32 sums; everything else (softmax, log-softmax, the criterions,
// batch normalisation's statistics, sums, the optimizers) stays float32, as PyTorch's autocast
// lists keep them. Tensors, parameters, gradients and the optimizers' state stay float32 (master
// weights): the operands are rounded as the products read them.
//
//   { nn::Autocast guard(nn::DType::BFloat16);   // bfloat16 products until the end of the scope
//     output = model->forward(input); ... model->backward(input, gradOutput); }
//
// The scope belongs to the thread that opens it and nests: an inner Autocast(DType::Float32), or
// an inner guard made disabled, turns it off until the inner scope ends. The threads that run a
// pass's parts on the thread's behalf (a CPU device's compute threads, a DataParallelTable's device
// threads; nn/runtime/WorkerThreads.h) take the caller's setting for each task they run, as
// PyTorch's DataParallel carries autocast into its replicas' threads.
//
// Against the float32 matmul precision (nn/runtime/MatmulPrecision.h), process-wide: inside a
// bfloat16 scope the products take the precision medium's route whatever the precision in force,
// inside a float16 scope the float16 route below; outside any scope (or in a disabled one) the
// precision in force decides. What each backend does:
//  - CPU: bfloat16 products through the AVX512-BF16 or AMX kernels (nn/cpu/Bf16Gemm.h) where the
//    CPU has them at the kernels' level avx512; elsewhere (AVX2 CPUs, NN_CPU_ISA=avx2 or generic)
//    float32 products, and stderr says so once. float16: no CPU multiplies it faster, so the
//    operands are rounded to float16 (nn/math/Half.h) and multiplied in float32, which gives
//    float16's rounding at float32's speed; stderr says so once.
//  - CUDA: cuBLAS's compute types CUBLAS_COMPUTE_32F_FAST_16BF and CUBLAS_COMPUTE_32F_FAST_16F;
//    cuDNN's convolutions take tensor-op algorithms, TF32 on the float32 tensors.
#pragma once

#include "nn/tensor/DType.h"

namespace nn {

/// The element type of the products of the calling thread's autocast scope: BFloat16 or Float16
/// inside an enabled scope, Float32 outside any (or in a disabled or float32 one).
DType autocastType();

/// Whether the calling thread is in an enabled scope of a reduced type (autocastType() is not
/// Float32).
inline bool autocastEnabled() { return autocastType() != DType::Float32; }

/// Sets the calling thread's autocast type without a scope, for the threads that run a pass's
/// parts on another thread's behalf (WorkerThreads); Autocast guards are for everyone else.
void setAutocastType(DType dtype);

/// A scope of autocast on the calling thread (see the top of this file): from construction to
/// destruction the thread's products are `dtype`'s (Float32: none), or none where `enabled` is
/// false; the previous setting comes back at destruction. Not copyable; destroy it on the thread
/// that made it, in the reverse order of construction, as any scope.
class Autocast {
 public:
  explicit Autocast(DType dtype, bool enabled = true);
  ~Autocast();
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

  /// The type this scope set: `dtype`, or Float32 where disabled.
  DType type() const { return type_; }

 private:
  DType type_;
  DType previous_;
};

/// "bf16", "fp16" or "off" as a type for Autocast (BFloat16, Float16, Float32): the examples'
/// --autocast; PyTorch's names "bfloat16", "float16" and "float32" too; another name is an
/// nn::Error listing the first three.
DType autocastNamed(const char* name);

}  // namespace nn

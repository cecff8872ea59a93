// NN_HD marks a function that both the CPU kernels (g++) and the CUDA kernels (nvcc) call.
// Every formula of the library is written once, as an NN_HD inline function in nn/math/.
#pragma once

#ifdef __CUDACC__
#define NN_HD __host__ __device__
#else
#define NN_HD
#endif

// First include of every .cu file and of CUDA-side runtime sources: the CUDA runtime under
// nvcc (and in host code of the nvcc build), the SIMT layer when the build defines HULK_SIMT.
#pragma once

#if defined(HULK_SIMT) && defined(__CUDACC__)
#error "HULK_SIMT is for compiling .cu files as C++; nvcc builds must not define it"
#endif

#if defined(HULK_SIMT)
#include "cuda/simt/simt.h"
#else
#include <cuda_runtime.h>
#endif

// Helpers shared by kernels and host code.
#if defined(__CUDACC__)
#define HULK_HD __host__ __device__
#else
#define HULK_HD
#endif

// Dynamic shared memory of the block (the launch's shared_bytes) as `T* name`; a statement.
#if defined(__CUDACC__)
#define HULK_DYNAMIC_SHARED(T, name)                      \
  extern __shared__ __align__(16) unsigned char hulk_smem_[]; \
  T* name = reinterpret_cast<T*>(hulk_smem_)
#endif

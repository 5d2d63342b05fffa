// HULK_SIMD_CLONES: build a hot loop's function for AVX-512, AVX2+FMA and the baseline ISA and
// let the dynamic loader pick one by the CPU it runs on (GCC's target_clones, an ifunc). The
// package is compiled for the baseline x86-64, where these loops would use 4-wide SSE and no
// vector 64-bit multiply. Put it on a function called from inside an OpenMP loop, not on the
// function holding the `omp parallel` region: the outlined region is a separate function.
// Clones are named by ISA feature, not by "arch=": GCC picks an "arch=haswell" clone by CPU
// model name (__builtin_cpu_is), which no AMD processor matches, so those never ran on an EPYC.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HULK_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HULK_SIMD_CLONES
#endif

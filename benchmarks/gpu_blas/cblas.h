/* The part of the CBLAS interface hulk uses (cblas_sgemm), for a machine without a system CBLAS:
 * benchmarks/gpu_check.sh puts this folder on CPATH and links libopenblas.so built from shim.c,
 * which forwards to the OpenBLAS that the numpy or scipy wheel bundles (scipy-openblas). Enum
 * values are the CBLAS standard's. */
#ifndef HULK_GPU_BLAS_CBLAS_H
#define HULK_GPU_BLAS_CBLAS_H
#ifdef __cplusplus
extern "C" {
#endif
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
typedef enum CBLAS_ORDER CBLAS_LAYOUT;
void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, int m, int n,
                 int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
#ifdef __cplusplus
}
#endif
#endif

/* 2x3 times 3x2 through the shim's cblas_sgemm; exit 0 when right. */
#include <math.h>
#include <stdio.h>

#include "cblas.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

int main(void) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  float c[4] = {-1, -1, -1, -1};
  const float want[4] = {58, 64, 139, 154};
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2);
  for (int i = 0; i < 4; ++i)
    if (fabsf(c[i] - want[i]) > 1e-4f) {
      printf("gpu_blas selftest: c[%d] = %g, want %g\n", i, c[i], want[i]);
      return 1;
    }
  openblas_set_num_threads(1);
  if (openblas_get_num_threads() != 1) {
    printf("gpu_blas selftest: openblas_set_num_threads(1) left %d threads\n", openblas_get_num_threads());
    return 1;
  }
  puts("gpu_blas selftest: cblas_sgemm through the wheel's OpenBLAS is right; its threads are set to 1");
  return 0;
}

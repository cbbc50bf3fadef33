/* Checks the two kernels of a library that `lathe compile --db` built
 * (tests/cli/compile_db_test.sh) against plain loops: a matmul
 * MM_FN(A[M,K], B[K,N]) -> C[M,N] and a dense+bias+relu
 * DENSE_FN(X[DM,DK], W[DN,DK], bias[DN]) -> Y[DM,DN]. Prints "ok" when
 * every element agrees, the first mismatch otherwise. The header comes in
 * through -include. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float Value(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 9) % 2001) / 1000.0f - 1.0f;
}

static float* Filled(int n, unsigned* state) {
  float* p = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; ++i) p[i] = Value(state);
  return p;
}

static int Close(float got, float want, int work) {
  return fabsf(got - want) <= 1e-5f * (float)work * (1.0f + fabsf(want));
}

int main(void) {
  unsigned state = 7;
  float* a = Filled(M * K, &state);
  float* b = Filled(K * N, &state);
  float* c = Filled(M * N, &state);
  if (MM_FN(a, b, c) != 0) { printf("matmul returned non-zero\n"); return 1; }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      if (!Close(c[i * N + j], want, K)) {
        printf("matmul C[%d,%d] = %g, want %g\n", i, j, c[i * N + j], want);
        return 1;
      }
    }
  }
  float* x = Filled(DM * DK, &state);
  float* w = Filled(DN * DK, &state);
  float* bias = Filled(DN, &state);
  float* y = Filled(DM * DN, &state);
  if (DENSE_FN(x, w, bias, y) != 0) { printf("dense returned non-zero\n"); return 1; }
  for (int i = 0; i < DM; ++i) {
    for (int j = 0; j < DN; ++j) {
      float want = bias[j];
      for (int k = 0; k < DK; ++k) want += x[i * DK + k] * w[j * DK + k];
      if (want < 0) want = 0;
      if (!Close(y[i * DN + j], want, DK)) {
        printf("dense Y[%d,%d] = %g, want %g\n", i, j, y[i * DN + j], want);
        return 1;
      }
    }
  }
  printf("ok\n");
  return 0;
}

/* A C program that links a kernel from `lathe compile` (.o + runtime, or
 * .a) through its generated header and checks it against plain loops.
 * Built by tests/cli/CMakeLists.txt with -DFN=<kernel> -DM= -DN= -DK= and
 * -include <header>; exits 0 and prints "ok" when every element matches
 * (after a second call, made once the scratch was released). */
#include <math.h>
#include <stdio.h>

#ifndef FN
#error "build with -DFN=kernel -DM=.. -DN=.. -DK=.. -include header.h"
#endif

static float a[M * K], b[K * N], c[M * N];

int main(void) {
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 13) * 0.125f - 0.75f;
  lathe_set_num_threads(2);
  int rc = FN(a, b, c);
  /* Declared by the header, linked with the runtime: the kernel runs again
   * after its kept scratch was given back. */
  lathe_release_scratch();
  if (rc == 0) rc = FN(a, b, c);
  if (rc != 0) {
    printf("kernel returned %d\n", rc);
    return 3;
  }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += (double)a[i * K + k] * b[k * N + j];
      if (fabs(c[i * N + j] - want) > 1e-4 + 1e-5 * fabs(want)) {
        printf("C[%d,%d] = %f, want %f\n", i, j, c[i * N + j], want);
        return 2;
      }
    }
  }
  printf("ok\n");
  return 0;
}

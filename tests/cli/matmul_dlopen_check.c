/* Loads a shared library from `lathe compile -o X.so` with dlopen, finds
 * the kernel, its thread setter and its scratch release with dlsym and
 * calls them through the C ABI of docs/architecture.md
 * (int f(const float* A, const float* B, float* C)), checking the result against plain loops.
 *   matmul_dlopen_check LIB.so FUNCTION M N K
 * Built by tests/cli/CMakeLists.txt; prints "ok" and exits 0 on success. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*matmul_fn)(const float*, const float*, float*);
typedef void (*set_threads_fn)(int);
typedef void (*release_fn)(void);

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s LIB.so FUNCTION M N K\n", argv[0]);
    return 1;
  }
  int m = atoi(argv[3]), n = atoi(argv[4]), kk = atoi(argv[5]);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("dlopen: %s\n", dlerror());
    return 4;
  }
  matmul_fn fn = (matmul_fn)dlsym(lib, argv[2]);
  char setter[256];
  snprintf(setter, sizeof setter, "%s_set_num_threads", argv[2]);
  set_threads_fn set_threads = (set_threads_fn)dlsym(lib, setter);
  char release_name[256];
  snprintf(release_name, sizeof release_name, "%s_release_scratch", argv[2]);
  release_fn release = (release_fn)dlsym(lib, release_name);
  if (fn == NULL || set_threads == NULL || release == NULL) {
    printf("dlsym: %s, %s or %s missing\n", argv[2], setter, release_name);
    return 5;
  }
  /* The runtime inside is private: its own symbols are not exported. */
  if (dlsym(lib, "lathe_parallel_for") != NULL || dlsym(lib, "lathe_release_scratch") != NULL) {
    printf("the runtime's symbols are exported\n");
    return 6;
  }
  float* a = malloc(sizeof(float) * m * kk);
  float* b = malloc(sizeof(float) * kk * n);
  float* c = malloc(sizeof(float) * m * n);
  for (int i = 0; i < m * kk; ++i) a[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  for (int i = 0; i < kk * n; ++i) b[i] = (float)((i * 5) % 13) * 0.125f - 0.75f;
  for (int threads = 1; threads <= 2; ++threads) {
    /* The second call runs after its scratch was given back. */
    if (threads == 2) release();
    set_threads(threads);
    memset(c, 0, sizeof(float) * m * n);
    int rc = fn(a, b, c);
    if (rc != 0) {
      printf("kernel returned %d\n", rc);
      return 3;
    }
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double want = 0;
        for (int k = 0; k < kk; ++k) want += (double)a[i * kk + k] * b[k * n + j];
        if (fabs(c[i * n + j] - want) > 1e-4 + 1e-5 * fabs(want)) {
          printf("threads %d: C[%d,%d] = %f, want %f\n", threads, i, j, c[i * n + j], want);
          return 2;
        }
      }
    }
  }
  free(a);
  free(b);
  free(c);
  dlclose(lib);
  printf("ok\n");
  return 0;
}

/* The runtime header compiled as C (C99, -pedantic-errors) and used from C:
 * proves lathe_runtime.h is valid C and that its functions work with C
 * callbacks. lathe_c_abi_check() is called by c_abi_test.cc (gtest) and by
 * c_abi_main.c, a pure C program linked with the C compiler, which proves the
 * runtime needs no C++ library at link time. */
#include <stddef.h>
#include <stdint.h>

#include "compiler/runtime/lathe_runtime.h"

struct Squares {
  int64_t* out;
  int64_t fail_at; /* -1: never */
};

static int SquareTask(int64_t task, void* closure) {
  struct Squares* squares = (struct Squares*)closure;
  if (task == squares->fail_at) return 9;
  squares->out[task] = task * task;
  return 0;
}

/* 0 if every check passes, else the number of the first failing check. */
int lathe_c_abi_check(void) {
  enum { kTasks = 1003 };
  struct Squares squares;
  lathe_task_fn fn = SquareTask;
  int64_t i;
  int saved_threads = lathe_get_num_threads();

  if (saved_threads < 1) return 1;
  lathe_set_num_threads(3);
  if (lathe_get_num_threads() != 3) return 2;

  squares.out = (int64_t*)lathe_alloc(kTasks * sizeof(int64_t), 64);
  if (squares.out == NULL) return 3;
  if (((uintptr_t)squares.out) % 64 != 0) return 4;
  squares.fail_at = -1;
  if (lathe_parallel_for(kTasks, fn, &squares) != 0) return 5;
  for (i = 0; i < kTasks; ++i) {
    if (squares.out[i] != i * i) return 6;
  }
  squares.fail_at = 500;
  if (lathe_parallel_for(kTasks, fn, &squares) != 9) return 7;
  if (lathe_parallel_for(0, fn, &squares) != 0) return 8;
  lathe_free(squares.out);
  lathe_free(NULL);

  {
    /* A small image is read where it is; the macro is a C constant. */
    static const float image[4] = {1, 2, 3, 4};
    static char space[LATHE_MODEL_CONSTANTS_SPACE(sizeof image)];
    const void* where = NULL;
    if (lathe_model_constants(image, space, sizeof image, &where) != image)
      return 11;
    if (where != image) return 12;
  }

  if (lathe_runtime_version() == NULL) return 9;
  if (LATHE_RUNTIME_ABI_VERSION < 1) return 10;
  lathe_set_num_threads(0);
  return 0;
}

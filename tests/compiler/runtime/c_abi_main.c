/* A C program that uses the runtime: linked by the C compiler, without
 * libstdc++, so it fails to link if the runtime ever needs the C++ library.
 * Registered as the CTest test runtime_c_link_test. */
#include <stdio.h>

int lathe_c_abi_check(void);

int main(void) {
  int failed = lathe_c_abi_check();
  if (failed != 0) fprintf(stderr, "c_abi check %d failed\n", failed);
  return failed;
}

// Runs a kernel for builds (compiler/codegen/cuda/cuda_host_source.h) the
// way a user's program would: scripts/gpu-check.sh has lathe-gpu-check emit
// softmax:M=4,N=512 as softmax_4x512.{h,cc}, compiles this file with it and
// the driver library (g++ ... -lcuda), and runs it on the GPU. It checks
// the output against softmax computed here and prints PASS or FAIL.
// Not part of the CMake build: it needs the generated files and libcuda.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "softmax_4x512.h"

namespace {

int Fail(const char* what, int code) {
  std::printf("FAIL host entry point: %s (%d)\n", what, code);
  return 1;
}

}  // namespace

int main() {
  constexpr int kRows = 4, kCols = 512;
  constexpr size_t kBytes = sizeof(float) * kRows * kCols;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (int r = cuInit(0)) return Fail("cuInit", r);
  if (int r = cuDeviceGet(&device, 0)) return Fail("cuDeviceGet", r);
  if (int r = cuDevicePrimaryCtxRetain(&context, device))
    return Fail("cuDevicePrimaryCtxRetain", r);
  if (int r = cuCtxSetCurrent(context)) return Fail("cuCtxSetCurrent", r);
  std::vector<float> x(kRows * kCols), y(kRows * kCols, NAN);
  for (int i = 0; i < kRows * kCols; ++i) x[i] = 3.0f * std::sin(0.37f * i);
  CUdeviceptr dx = 0, dy = 0;
  if (int r = cuMemAlloc(&dx, kBytes)) return Fail("cuMemAlloc", r);
  if (int r = cuMemAlloc(&dy, kBytes)) return Fail("cuMemAlloc", r);
  if (int r = cuMemcpyHtoD(dx, x.data(), kBytes)) return Fail("copy in", r);
  if (int r = softmax_4x512(dx, dy, nullptr)) return Fail("softmax_4x512", r);
  if (int r = cuStreamSynchronize(nullptr)) return Fail("synchronize", r);
  if (int r = cuMemcpyDtoH(y.data(), dy, kBytes)) return Fail("copy out", r);
  double worst = 0;
  for (int row = 0; row < kRows; ++row) {
    const float* in = &x[row * kCols];
    double max = in[0], sum = 0;
    for (int j = 0; j < kCols; ++j) max = std::fmax(max, in[j]);
    for (int j = 0; j < kCols; ++j) sum += std::exp(in[j] - max);
    for (int j = 0; j < kCols; ++j) {
      const double expected = std::exp(in[j] - max) / sum;
      const double error = std::fabs(y[row * kCols + j] - expected);
      worst = std::isnan(error) ? INFINITY : std::fmax(worst, error);
    }
  }
  cuMemFree(dx);
  cuMemFree(dy);
  const bool pass = worst <= 1e-6;
  std::printf("%s host entry point softmax_4x512: max |error| %.2e\n",
              pass ? "PASS" : "FAIL", worst);
  return pass ? 0 : 1;
}

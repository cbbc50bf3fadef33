// cuDNN's forward convolution as a peer for the GPU check: libcudnn.so.9
// opened with dlopen (no link-time dependency), fp32 NCHW tensors and KCRS
// filters, math mode CUDNN_DEFAULT_MATH (no TF32 tensor cores), the fastest
// algorithm cudnnFindConvolutionForwardAlgorithm reports for the shape.
// Tests: tests/tools/CMakeLists.txt (gpu.lathe_gpu_check, on a device).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_driver.h"

namespace lathe::tools {

struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;  // input, NCHW
  int k = 1, r = 1, s = 1;         // filters, KCRS
  int pad = 0, stride = 1;
  int OutH() const { return (h + 2 * pad - r) / stride + 1; }
  int OutW() const { return (w + 2 * pad - s) / stride + 1; }
};

class CudnnConv2d {
 public:
  // FailedPrecondition when cuDNN cannot be loaded or initialized, or has
  // no algorithm for the shape. Allocates its workspace on `device`.
  static absl::StatusOr<std::unique_ptr<CudnnConv2d>> Create(
      cuda::CudaDevice* device, const ConvShape& shape);
  ~CudnnConv2d();

  // y = conv(x, w) on device pointers, on the default stream (asynchronous).
  absl::Status Run(cuda::DevicePtr x, cuda::DevicePtr w, cuda::DevicePtr y);
  // The algorithm chosen, by its number in cudnnConvolutionFwdAlgo_t.
  int algorithm() const { return algo_; }

 private:
  CudnnConv2d() = default;
  cuda::CudaDevice* device_ = nullptr;
  void* handle_ = nullptr;
  void* x_desc_ = nullptr;
  void* y_desc_ = nullptr;
  void* w_desc_ = nullptr;
  void* conv_desc_ = nullptr;
  int algo_ = 0;
  cuda::DevicePtr workspace_ = 0;
  size_t workspace_bytes_ = 0;
  int (*destroy_)(void*) = nullptr;
  int (*forward_)(void*, const void*, void*, const void*, void*, const void*,
                  void*, int, void*, size_t, const void*, void*,
                  void*) = nullptr;
};

}  // namespace lathe::tools

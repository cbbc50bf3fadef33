#include "tools/cudnn_conv.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace lathe::tools {
namespace {

// cuDNN 9's values and its algorithm report (cudnn_graph.h, cudnn_cnn.h),
// declared here so that building needs no cuDNN header.
constexpr int kNchw = 0;              // CUDNN_TENSOR_NCHW
constexpr int kFloat = 0;             // CUDNN_DATA_FLOAT
constexpr int kCrossCorrelation = 1;  // CUDNN_CROSS_CORRELATION
constexpr int kDefaultMath = 0;       // CUDNN_DEFAULT_MATH
struct FwdAlgoPerf {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

template <typename Fn>
bool Load(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudnnConv2d>> CudnnConv2d::Create(
    cuda::CudaDevice* device, const ConvShape& shape) {
  void* lib = nullptr;
  for (const char* path :
       {"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9",
        "/usr/local/cuda/lib/libcudnn.so.9"}) {
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
  }
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no cuDNN: ", dlerror()));
  }
  int (*create)(void**);
  int (*create_tensor)(void**);
  int (*set_tensor)(void*, int, int, int, int, int, int);
  int (*create_filter)(void**);
  int (*set_filter)(void*, int, int, int, int, int, int);
  int (*create_conv)(void**);
  int (*set_conv)(void*, int, int, int, int, int, int, int, int);
  int (*set_math)(void*, int);
  int (*find)(void*, void*, void*, void*, void*, int, int*, FwdAlgoPerf*);
  int (*workspace)(void*, void*, void*, void*, void*, int, size_t*);
  std::unique_ptr<CudnnConv2d> out(new CudnnConv2d());
  out->device_ = device;
  if (!Load(lib, "cudnnCreate", &create) ||
      !Load(lib, "cudnnDestroy", &out->destroy_) ||
      !Load(lib, "cudnnCreateTensorDescriptor", &create_tensor) ||
      !Load(lib, "cudnnSetTensor4dDescriptor", &set_tensor) ||
      !Load(lib, "cudnnCreateFilterDescriptor", &create_filter) ||
      !Load(lib, "cudnnSetFilter4dDescriptor", &set_filter) ||
      !Load(lib, "cudnnCreateConvolutionDescriptor", &create_conv) ||
      !Load(lib, "cudnnSetConvolution2dDescriptor", &set_conv) ||
      !Load(lib, "cudnnSetConvolutionMathType", &set_math) ||
      !Load(lib, "cudnnFindConvolutionForwardAlgorithm", &find) ||
      !Load(lib, "cudnnGetConvolutionForwardWorkspaceSize", &workspace) ||
      !Load(lib, "cudnnConvolutionForward", &out->forward_)) {
    return absl::FailedPreconditionError(
        "cuDNN lacks the legacy convolution API");
  }
  auto check = [](int r, const char* what) -> absl::Status {
    if (r == 0) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("cuDNN: ", what, " failed (", r, ")"));
  };
  absl::Status s = check(create(&out->handle_), "cudnnCreate");
  if (s.ok()) s = check(create_tensor(&out->x_desc_), "tensor descriptor");
  if (s.ok()) s = check(create_tensor(&out->y_desc_), "tensor descriptor");
  if (s.ok()) s = check(create_filter(&out->w_desc_), "filter descriptor");
  if (s.ok()) s = check(create_conv(&out->conv_desc_), "conv descriptor");
  if (s.ok()) {
    s = check(set_tensor(out->x_desc_, kNchw, kFloat, shape.n, shape.c, shape.h,
                         shape.w),
              "cudnnSetTensor4dDescriptor (x)");
  }
  if (s.ok()) {
    s = check(set_tensor(out->y_desc_, kNchw, kFloat, shape.n, shape.k,
                         shape.OutH(), shape.OutW()),
              "cudnnSetTensor4dDescriptor (y)");
  }
  if (s.ok()) {
    s = check(set_filter(out->w_desc_, kFloat, kNchw, shape.k, shape.c, shape.r,
                         shape.s),
              "cudnnSetFilter4dDescriptor");
  }
  if (s.ok()) {
    s = check(set_conv(out->conv_desc_, shape.pad, shape.pad, shape.stride,
                       shape.stride, 1, 1, kCrossCorrelation, kFloat),
              "cudnnSetConvolution2dDescriptor");
  }
  if (s.ok()) {
    s = check(set_math(out->conv_desc_, kDefaultMath),
              "cudnnSetConvolutionMathType");
  }
  FwdAlgoPerf perf[16] = {};
  int returned = 0;
  if (s.ok()) {
    s = check(find(out->handle_, out->x_desc_, out->w_desc_, out->conv_desc_,
                   out->y_desc_, 16, &returned, perf),
              "cudnnFindConvolutionForwardAlgorithm");
  }
  if (!s.ok()) return s;
  // The fastest that ran without tensor cores (reports are sorted by time).
  int chosen = -1;
  for (int i = 0; i < returned && chosen < 0; ++i) {
    if (perf[i].status == 0 && perf[i].math_type == kDefaultMath) chosen = i;
  }
  if (chosen < 0) {
    return absl::FailedPreconditionError(
        "cuDNN has no fp32 algorithm for the convolution");
  }
  out->algo_ = perf[chosen].algo;
  s = check(workspace(out->handle_, out->x_desc_, out->w_desc_, out->conv_desc_,
                      out->y_desc_, out->algo_, &out->workspace_bytes_),
            "cudnnGetConvolutionForwardWorkspaceSize");
  if (!s.ok()) return s;
  if (out->workspace_bytes_ > 0) {
    absl::StatusOr<cuda::DevicePtr> ws =
        device->Alloc(static_cast<int64_t>(out->workspace_bytes_));
    if (!ws.ok()) return ws.status();
    out->workspace_ = *ws;
  }
  return out;
}

CudnnConv2d::~CudnnConv2d() {
  if (workspace_ != 0) device_->Free(workspace_);
  if (handle_ != nullptr) destroy_(handle_);
}

absl::Status CudnnConv2d::Run(cuda::DevicePtr x, cuda::DevicePtr w,
                              cuda::DevicePtr y) {
  const float alpha = 1, beta = 0;
  const int r =
      forward_(handle_, &alpha, x_desc_, reinterpret_cast<const void*>(x),
               w_desc_, reinterpret_cast<const void*>(w), conv_desc_, algo_,
               reinterpret_cast<void*>(workspace_), workspace_bytes_, &beta,
               y_desc_, reinterpret_cast<void*>(y));
  if (r != 0) {
    return absl::InternalError(
        absl::StrCat("cudnnConvolutionForward failed (", r, ")"));
  }
  return absl::OkStatus();
}

}  // namespace lathe::tools

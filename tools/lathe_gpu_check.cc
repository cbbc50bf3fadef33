// lathe-gpu-check: the GPU path end to end on one machine, in one
// self-contained binary (no LLVM, no CUDA library at link time), for the
// device machines, whose image has none of Lathe's build dependencies
// (scripts/gpu-check.sh carries it there).
//
//   lathe-gpu-check [--target "cuda ..."] [--ops SPEC;SPEC...] [--gemm N]
//                   [--gemm-variants] [--conv-variants SPEC;SPEC...]
//                   [--no-device-exit CODE]
//     For each workload (every registry operator at a medium shape and a
//     custom matmul, unless --ops): the default GPU schedule, CUDA C, NVRTC
//     to a cubin, a run on the GPU checked against the CPU reference, and
//     its time (CUDA events, median of repeats after a warm-up): one PASS
//     or FAIL line each; without --ops, then the device check's probes
//     (device_check_probe.h). Then an fp32 GEMM N^3 (default 4096) against
//     cublasSgemm (tensor cores off) on the same device buffers: both
//     outputs compared, both timed, the ratio printed; with
//     --gemm-variants, also the shared-memory tile's K chunk, register
//     tile and register groups varied (DefaultGpuScheduleOptions), one
//     comparison each. With --conv-variants, each conv2d_nchw's default
//     schedule with its first ranked shared-memory tiles and without one,
//     each against cuDNN (--gemm 0 leaves the GEMM out).
//     Exit 0 when everything passed, 1 when something failed, and
//     --no-device-exit's code (default 2) when there is no CUDA driver or
//     device, after one line saying so.
//   lathe-gpu-check --tune SPEC [--trials N] [--time-budget S] [--db FILE]
//                   [--compile-timeout S]
//     A tuning run of SPEC on this machine's GPU (gpu_tune.h): for a square
//     matmul cublasSgemm, for a conv2d_nchw cuDNN, timed first (the peer);
//     the tuning curve, each line with its best's ratio to the peer; the
//     best time against the default schedule's, the compile time per
//     candidate; then the best schedule against the peer again, outputs
//     compared. The database defaults to a
//     new temporary file. Each candidate is compiled by this binary in a child
//     process (below), killed past the compile timeout (default 20 s).
//   lathe-gpu-check --runner-check [--target "cuda ..."]
//     Candidates measured through a LocalRunner and confined worker
//     processes (this binary's --worker), faults included (runner_check.h).
//   lathe-gpu-check --model [--target "cuda ..."]
//     Models run through api::GpuModel, as `lathe run MODEL --target cuda`
//     runs them, each checked against the host (model_check.h).
//   lathe-gpu-check --service-check [--target "cuda ..."] [--simulate-ms MS]
//     A tuning job through a tuner daemon and a remote runner on loopback
//     gRPC, measured in confined worker processes (service_check.h); with
//     --simulate-ms, a simulated job and runner, without a GPU (the target
//     defaults to sm_90).
//   lathe-gpu-check --worker
//     A CUDA measuring worker on stdin and stdout, confined
//     (runner/cuda/cuda_worker.h): what `lathe runner-worker --cuda` is.
//   lathe-gpu-check --compile-cuda ARCH
//     Compiles the CUDA C on stdin with NVRTC to a cubin for ARCH (sm_90)
//     on stdout.
//   lathe-gpu-check --source SPEC [--target "cuda ..."] [--trace FILE]
//     Prints the CUDA C of SPEC (default schedule, or the trace in its text
//     form) and its launches; no device needed (the golden tests,
//     tests/lit/cuda/).
//   lathe-gpu-check --ptx SPEC [--target ...]
//     Compiles SPEC's CUDA C with NVRTC and prints the PTX; no device.
//   lathe-gpu-check --source SPEC --emit DIR [--name NAME] [--target ...]
//     Writes the kernel for builds (cuda_host_source.h): DIR/NAME.cu (the
//     CUDA C), DIR/NAME.ptx, DIR/NAME.cubin, and DIR/NAME.h and DIR/NAME.cc,
//     the host entry point with the cubin embedded; no device.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_host_source.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/interp/random_fill.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/default_gpu_schedule.h"
#include "compiler/schedule/trace_file.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/registry.h"
#include "compiler/workload/spec.h"
#include "runner/cuda/cuda_worker.h"
#include "runner/worker_sandbox.h"
#include "tools/cublas_sgemm.h"
#include "tools/cudnn_conv.h"
#include "tools/device_check_probe.h"
#include "tools/gpu_tune.h"
#include "tools/model_check.h"
#include "tools/runner_check.h"
#include "tools/service_check.h"

namespace lathe::tools {
namespace {

// Medium shapes: large enough to fill a GPU, small enough for the CPU
// reference to take at most a few seconds.
const std::vector<std::string>& DefaultSpecs() {
  static const auto* const kSpecs = new std::vector<std::string>{
      "matmul:M=512,N=512,K=512",
      "batch_matmul:B=8,M=128,N=128,K=256",
      "dense:M=256,N=512,K=512,bias=1,relu=1",
      "dense:M=1,N=1000,K=4096,bias=1",
      "conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
      "conv2d_nhwc:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1",
      "max_pool2d:N=4,C=64,H=56,W=56,R=3,S=3,stride=2,pad=1",
      "avg_pool2d:N=4,C=64,H=56,W=56,R=3,S=3,stride=2,pad=1",
      "softmax:M=1024,N=1000",
      "add:M=1024,N=1024",
      "relu:M=1024,N=1024",
  };
  return *kSpecs;
}

// Every registry operator's medium spec; an operator without one (added
// since) gets its required parameters at 16.
std::vector<std::string> AllSpecs() {
  std::vector<std::string> specs = DefaultSpecs();
  for (const OperatorDef& op : Operators()) {
    bool covered = false;
    for (const std::string& s : specs)
      covered |= s.rfind(op.name + ":", 0) == 0;
    if (covered) continue;
    std::vector<std::string> params;
    for (const ParamSpec& p : op.params) {
      if (p.required()) params.push_back(p.name + "=16");
    }
    specs.push_back(absl::StrCat(op.name, ":", absl::StrJoin(params, ",")));
  }
  return specs;
}

absl::StatusOr<Workload> ParseAny(const std::string& spec) {
  // "custom:EXPR|DIMS" is a spec too (workload.h).
  return ParseWorkloadSpec(spec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Milliseconds per call of `launch`: a warm-up, then repeats of enough
// calls for 20 ms of GPU time each, the median of 5.
absl::StatusOr<double> TimeMs(cuda::CudaDevice* device,
                              const std::function<absl::Status()>& launch) {
  LATHE_RETURN_IF_ERROR(launch());
  LATHE_RETURN_IF_ERROR(device->Synchronize());
  LATHE_RETURN_IF_ERROR(device->StartTimer());
  LATHE_RETURN_IF_ERROR(launch());
  LATHE_ASSIGN_OR_RETURN(double once, device->StopTimer());
  const int calls =
      static_cast<int>(std::clamp(20.0 / std::max(once, 1e-3), 1.0, 1000.0));
  std::vector<double> samples;
  for (int r = 0; r < 5; ++r) {
    LATHE_RETURN_IF_ERROR(device->StartTimer());
    for (int c = 0; c < calls; ++c) LATHE_RETURN_IF_ERROR(launch());
    LATHE_ASSIGN_OR_RETURN(double ms, device->StopTimer());
    samples.push_back(ms / calls);
  }
  return Median(samples);
}

absl::StatusOr<Target> TargetFor(const std::string& text) {
  return cuda::ParseCudaTarget(text);
}

// A kernel's launch: "NAME grid=(x,y,z) block=(x,y,z) shared=BYTES".
std::string LaunchText(const cuda::CudaKernel& k) {
  return absl::StrCat(k.name, " grid=(", k.grid.x, ",", k.grid.y, ",", k.grid.z,
                      ") block=(", k.block.x, ",", k.block.y, ",", k.block.z,
                      ") shared=", k.shared_bytes);
}

int PrintSource(const std::string& spec, const std::string& target_text,
                const std::string& trace_file, bool ptx,
                const std::string& emit_dir, const std::string& emit_name) {
  absl::StatusOr<Target> target = TargetFor(target_text);
  absl::StatusOr<Workload> workload =
      target.ok() ? ParseAny(spec) : absl::StatusOr<Workload>(target.status());
  absl::Status status = workload.status();
  std::optional<Trace> trace;
  if (status.ok() && !trace_file.empty()) {
    absl::StatusOr<Trace> parsed = ReadTraceFile(trace_file);
    if (parsed.ok()) trace = *parsed;
    status = parsed.status();
  }
  absl::StatusOr<cuda::CudaProgram> program =
      status.ok()
          ? cuda::MakeCudaProgram(*workload, trace ? &*trace : nullptr, *target)
          : absl::StatusOr<cuda::CudaProgram>(status);
  if (!program.ok()) {
    std::fprintf(stderr, "lathe-gpu-check: error: %s\n",
                 std::string(program.status().message()).c_str());
    return 1;
  }
  if (!emit_dir.empty()) {
    absl::StatusOr<cuda::CompiledCuda> compiled =
        cuda::CompileCuda(program->module.source, target->cpu, /*cubin=*/true);
    absl::StatusOr<cuda::HostSource> host =
        compiled.ok() ? cuda::GenerateHostSource(
                            program->module, program->lowered, compiled->cubin,
                            emit_name, emit_name + ".h",
                            absl::StrCat(workload->CanonicalForm(), " for ",
                                         target->ToString()))
                      : absl::StatusOr<cuda::HostSource>(compiled.status());
    if (!host.ok()) {
      std::fprintf(stderr, "lathe-gpu-check: error: %s\n",
                   std::string(host.status().message()).c_str());
      return 1;
    }
    const std::string base = absl::StrCat(emit_dir, "/", emit_name);
    const std::pair<std::string, const std::string*> files[] = {
        {".cu", &program->module.source},
        {".ptx", &compiled->ptx},
        {".cubin", &compiled->cubin},
        {".h", &host->header},
        {".cc", &host->source}};
    for (const auto& [suffix, text] : files) {
      std::ofstream out(base + suffix, std::ios::binary);
      out << *text;
      if (!out) {
        std::fprintf(stderr, "lathe-gpu-check: error: cannot write %s\n",
                     (base + suffix).c_str());
        return 1;
      }
    }
    std::printf("wrote %s.{cu,ptx,cubin,h,cc}\n", base.c_str());
    return 0;
  }
  if (ptx) {
    absl::StatusOr<cuda::CompiledCuda> compiled =
        cuda::CompileCuda(program->module.source, target->cpu, /*cubin=*/false);
    if (!compiled.ok()) {
      std::fprintf(stderr, "lathe-gpu-check: error: %s\n",
                   std::string(compiled.status().message()).c_str());
      return 1;
    }
    std::fputs(compiled->ptx.c_str(), stdout);
    return 0;
  }
  for (const cuda::CudaKernel& k : program->module.kernels)
    std::printf("// launch %s\n", LaunchText(k).c_str());
  std::fputs(program->module.source.c_str(), stdout);
  return 0;
}

// One workload on the device: PASS/FAIL with its time.
bool CheckOne(cuda::CudaDevice* device, const Target& target,
              const std::string& spec) {
  auto fail = [&](const absl::Status& status) {
    std::printf("FAIL %s: %s\n", spec.c_str(),
                std::string(status.message()).c_str());
    std::fflush(stdout);
    return false;
  };
  absl::StatusOr<Workload> workload = ParseAny(spec);
  if (!workload.ok()) return fail(workload.status());
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<cuda::CudaProgram> program =
      cuda::MakeCudaProgram(*workload, nullptr, target);
  if (!program.ok()) return fail(program.status());
  absl::StatusOr<cuda::CompiledCuda> compiled =
      cuda::CompileCuda(program->module.source, target.cpu, /*cubin=*/true);
  if (!compiled.ok()) return fail(compiled.status());
  const double compile_ms = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      cuda::LoadedModule::Load(device, program->module, compiled->cubin);
  if (!loaded.ok()) return fail(loaded.status());
  const int num_inputs = static_cast<int>(workload->inputs().size());
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return (*loaded)->Run(args, num_inputs);
      });
  if (!checked.ok()) return fail(checked);
  absl::StatusOr<double> ms =
      TimeMs(device, [&] { return (*loaded)->Launch(); });
  if (!ms.ok()) return fail(ms.status());
  absl::StatusOr<int64_t> flops = FlopCount(*workload);
  const double gflops = flops.ok() ? *flops / (*ms * 1e6) : 0;
  std::printf(
      "PASS %s: %.4f ms, %.1f GFLOP/s, %zu kernel(s), compile %.0f ms\n",
      spec.c_str(), *ms, gflops, program->module.kernels.size(), compile_ms);
  std::fflush(stdout);
  return true;
}

// `n` values uniform in [-1, 1] in steps of 1/1000, the next from `state`:
// the peers' and Lathe's inputs, the same for both.
std::vector<float> UniformValues(int64_t n, uint64_t* state) {
  std::vector<float> values(static_cast<size_t>(n));
  for (float& x : values)
    x = static_cast<float>(SplitMix64(state) % 2001) / 1000 - 1;
  return values;
}

// N of a square "matmul:M=N,N=N,K=N" spec (what cublasSgemm is compared
// with), nullopt for another workload.
std::optional<int> SquareMatmulSize(const std::string& spec) {
  int m = 0, n = 0, k = 0;
  if (std::sscanf(spec.c_str(), "matmul:M=%d,N=%d,K=%d", &m, &n, &k) == 3 &&
      m == n && n == k) {
    return n;
  }
  return std::nullopt;
}

// `workload` scheduled by `trace`, compiled to a cubin and loaded on the
// device.
absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> LoadScheduled(
    cuda::CudaDevice* device, const Target& target, const Workload& workload,
    const Trace& trace) {
  LATHE_ASSIGN_OR_RETURN(cuda::CudaProgram program,
                         cuda::MakeCudaProgram(workload, &trace, target));
  LATHE_ASSIGN_OR_RETURN(
      cuda::CompiledCuda compiled,
      cuda::CompileCuda(program.module.source, target.cpu, /*cubin=*/true));
  return cuda::LoadedModule::Load(device, program.module, compiled.cubin);
}

// A GEMM schedule (`trace`, else the default GPU schedule's with
// `options`) against cublasSgemm on the same inputs.
bool CompareWithCublas(cuda::CudaDevice* device, const Target& target, int n,
                       const DefaultGpuScheduleOptions& options,
                       const std::string& label, const Trace* tuned = nullptr) {
  const std::string spec = absl::StrCat("matmul:M=", n, ",N=", n, ",K=", n);
  auto fail = [&](const absl::Status& status) {
    std::printf("FAIL cublas comparison %s: %s\n", spec.c_str(),
                std::string(status.message()).c_str());
    std::fflush(stdout);
    return false;
  };
  absl::StatusOr<std::unique_ptr<CublasSgemm>> cublas = CublasSgemm::Create();
  if (!cublas.ok()) return fail(cublas.status());
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return fail(workload.status());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return fail(initial.status());
  absl::StatusOr<Trace> trace = tuned != nullptr
                                    ? absl::StatusOr<Trace>(*tuned)
                                    : DefaultGpuSchedule(*initial, options);
  if (!trace.ok()) return fail(trace.status());
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      LoadScheduled(device, target, *workload, *trace);
  if (!loaded.ok()) return fail(loaded.status());
  const int64_t elements = int64_t{n} * n;
  const int64_t bytes = elements * 4;
  uint64_t state = 1;
  const std::vector<float> a = UniformValues(elements, &state);
  const std::vector<float> b = UniformValues(elements, &state);
  std::vector<float> lathe_c(elements), cublas_c(elements);
  const cuda::DevicePtr da = (*loaded)->ParamPointer(0);
  const cuda::DevicePtr db = (*loaded)->ParamPointer(1);
  const cuda::DevicePtr dc = (*loaded)->ParamPointer(2);
  absl::StatusOr<cuda::DevicePtr> dc_cublas = device->Alloc(bytes);
  if (!dc_cublas.ok()) return fail(dc_cublas.status());
  absl::Status s = device->CopyToDevice(da, a.data(), bytes);
  if (s.ok()) s = device->CopyToDevice(db, b.data(), bytes);
  if (s.ok()) s = (*loaded)->Launch();
  if (s.ok()) s = (*cublas)->Run(n, n, n, da, db, *dc_cublas);
  if (s.ok()) s = device->Synchronize();
  if (s.ok()) s = device->CopyToHost(lathe_c.data(), dc, bytes);
  if (s.ok()) s = device->CopyToHost(cublas_c.data(), *dc_cublas, bytes);
  if (!s.ok()) {
    device->Free(*dc_cublas);
    return fail(s);
  }
  double max_error = 0;
  for (int64_t i = 0; i < elements; ++i) {
    max_error = std::max(
        max_error, static_cast<double>(std::fabs(lathe_c[i] - cublas_c[i])));
  }
  // Sums of n products of values in [-1, 1]: rounding of order sqrt(n) ulps.
  const double tolerance = 1e-5 * n;
  absl::StatusOr<double> lathe_ms =
      TimeMs(device, [&] { return (*loaded)->Launch(); });
  absl::StatusOr<double> cublas_ms = TimeMs(
      device, [&] { return (*cublas)->Run(n, n, n, da, db, *dc_cublas); });
  device->Free(*dc_cublas);
  if (!lathe_ms.ok()) return fail(lathe_ms.status());
  if (!cublas_ms.ok()) return fail(cublas_ms.status());
  const double flop = 2.0 * n * n * n;
  std::printf(
      "%s cublas comparison %s: lathe %s %.3f ms (%.0f GFLOP/s), "
      "cublasSgemm %.3f ms (%.0f GFLOP/s), ratio lathe/cublas throughput "
      "%.3f, max |difference| %.2e (tolerance %.2e)\n",
      max_error <= tolerance ? "PASS" : "FAIL", spec.c_str(), label.c_str(),
      *lathe_ms, flop / (*lathe_ms * 1e6), *cublas_ms,
      flop / (*cublas_ms * 1e6), *cublas_ms / *lathe_ms, max_error, tolerance);
  std::fflush(stdout);
  return max_error <= tolerance;
}

// The shape of a conv2d_nchw spec ("conv2d_nchw:N=1,C=128,...,pad=1"), or
// nullopt for another workload.
std::optional<ConvShape> ConvShapeOf(const std::string& spec) {
  if (spec.rfind("conv2d_nchw:", 0) != 0) return std::nullopt;
  ConvShape shape;
  const std::map<std::string, int*> fields = {
      {"N", &shape.n}, {"C", &shape.c},     {"H", &shape.h},
      {"W", &shape.w}, {"K", &shape.k},     {"R", &shape.r},
      {"S", &shape.s}, {"pad", &shape.pad}, {"stride", &shape.stride}};
  for (absl::string_view item :
       absl::StrSplit(spec.substr(spec.find(':') + 1), ',')) {
    std::vector<std::string> kv = absl::StrSplit(item, '=');
    auto field = kv.size() == 2 ? fields.find(kv[0]) : fields.end();
    if (field == fields.end()) return std::nullopt;  // dilation, bias, ...
    *field->second = std::atoi(kv[1].c_str());
  }
  return shape;
}

// A convolution's schedule (`trace`, printed as `label` with its kernels'
// launches) against cuDNN's fastest fp32 algorithm on the same inputs.
bool CompareWithCudnn(cuda::CudaDevice* device, const Target& target,
                      const std::string& spec, const ConvShape& shape,
                      const Trace& trace, const std::string& label) {
  auto fail = [&](const absl::Status& status) {
    std::printf("FAIL cudnn comparison %s: %s\n", spec.c_str(),
                std::string(status.message()).c_str());
    std::fflush(stdout);
    return false;
  };
  absl::StatusOr<std::unique_ptr<CudnnConv2d>> cudnn =
      CudnnConv2d::Create(device, shape);
  if (!cudnn.ok()) return fail(cudnn.status());
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return fail(workload.status());
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      LoadScheduled(device, target, *workload, trace);
  if (!loaded.ok()) return fail(loaded.status());
  const int64_t x_elements = int64_t{shape.n} * shape.c * shape.h * shape.w;
  const int64_t w_elements = int64_t{shape.k} * shape.c * shape.r * shape.s;
  const int64_t y_elements =
      int64_t{shape.n} * shape.k * shape.OutH() * shape.OutW();
  uint64_t state = 1;
  const std::vector<float> x = UniformValues(x_elements, &state);
  const std::vector<float> w = UniformValues(w_elements, &state);
  std::vector<float> lathe_y(y_elements), cudnn_y(y_elements);
  const cuda::DevicePtr dx = (*loaded)->ParamPointer(0);
  const cuda::DevicePtr dw = (*loaded)->ParamPointer(1);
  const cuda::DevicePtr dy = (*loaded)->ParamPointer(2);
  absl::StatusOr<cuda::DevicePtr> dy_cudnn = device->Alloc(y_elements * 4);
  if (!dy_cudnn.ok()) return fail(dy_cudnn.status());
  absl::Status st = device->CopyToDevice(dx, x.data(), x_elements * 4);
  if (st.ok()) st = device->CopyToDevice(dw, w.data(), w_elements * 4);
  if (st.ok()) st = (*loaded)->Launch();
  if (st.ok()) st = (*cudnn)->Run(dx, dw, *dy_cudnn);
  if (st.ok()) st = device->Synchronize();
  if (st.ok()) st = device->CopyToHost(lathe_y.data(), dy, y_elements * 4);
  if (st.ok())
    st = device->CopyToHost(cudnn_y.data(), *dy_cudnn, y_elements * 4);
  absl::StatusOr<double> lathe_ms =
      st.ok() ? TimeMs(device, [&] { return (*loaded)->Launch(); })
              : absl::StatusOr<double>(st);
  absl::StatusOr<double> cudnn_ms =
      lathe_ms.ok()
          ? TimeMs(device, [&] { return (*cudnn)->Run(dx, dw, *dy_cudnn); })
          : absl::StatusOr<double>(lathe_ms.status());
  device->Free(*dy_cudnn);
  if (!cudnn_ms.ok()) return fail(cudnn_ms.status());
  double max_error = 0;
  for (int64_t i = 0; i < y_elements; ++i) {
    max_error = std::max(
        max_error, static_cast<double>(std::fabs(lathe_y[i] - cudnn_y[i])));
  }
  const int64_t terms = int64_t{shape.c} * shape.r * shape.s;
  const double tolerance = 1e-5 * static_cast<double>(terms);
  std::string launches;
  for (const cuda::CudaKernel& k : (*loaded)->module().kernels)
    absl::StrAppend(&launches, " [", LaunchText(k), "]");
  const double flop = 2.0 * static_cast<double>(y_elements) * terms;
  std::printf(
      "%s cudnn comparison %s: lathe %s%s %.4f ms (%.0f GFLOP/s), cuDNN "
      "(algorithm %d) %.4f ms (%.0f GFLOP/s), ratio lathe/cudnn throughput "
      "%.3f, max |difference| %.2e (tolerance %.2e)\n",
      max_error <= tolerance ? "PASS" : "FAIL", spec.c_str(), label.c_str(),
      launches.c_str(), *lathe_ms, flop / (*lathe_ms * 1e6),
      (*cudnn)->algorithm(), *cudnn_ms, flop / (*cudnn_ms * 1e6),
      *cudnn_ms / *lathe_ms, max_error, tolerance);
  std::fflush(stdout);
  return max_error <= tolerance;
}

// The peer's time for `spec` before tuning, on inputs in [-1, 1]: for a
// square matmul cublasSgemm, for a conv2d_nchw cuDNN's fastest algorithm;
// nullopt for another workload. Printed first so that every line of the
// tuning curve carries a ratio to it from the same run, even when the run
// is cut short before the comparison after it.
struct PeerTime {
  std::string name;
  double ms = 0;
};
absl::StatusOr<std::optional<PeerTime>> TimePeer(cuda::CudaDevice* device,
                                                 const std::string& spec) {
  std::vector<int64_t> sizes;  // the peer's operands, in floats
  std::function<absl::StatusOr<PeerTime>(const std::vector<cuda::DevicePtr>&)>
      time;
  std::unique_ptr<CublasSgemm> cublas;
  std::unique_ptr<CudnnConv2d> cudnn;
  const std::optional<int> square = SquareMatmulSize(spec);
  const int n = square.value_or(0);
  if (std::optional<ConvShape> conv = ConvShapeOf(spec)) {
    LATHE_ASSIGN_OR_RETURN(cudnn, CudnnConv2d::Create(device, *conv));
    sizes = {int64_t{conv->n} * conv->c * conv->h * conv->w,
             int64_t{conv->k} * conv->c * conv->r * conv->s,
             int64_t{conv->n} * conv->k * conv->OutH() * conv->OutW()};
    time =
        [&](const std::vector<cuda::DevicePtr>& p) -> absl::StatusOr<PeerTime> {
      LATHE_ASSIGN_OR_RETURN(double ms, TimeMs(device, [&] {
                               return cudnn->Run(p[0], p[1], p[2]);
                             }));
      return PeerTime{
          absl::StrCat("cuDNN (algorithm ", cudnn->algorithm(), ")"), ms};
    };
  } else if (square.has_value()) {
    LATHE_ASSIGN_OR_RETURN(cublas, CublasSgemm::Create());
    sizes.assign(3, int64_t{n} * n);
    time =
        [&](const std::vector<cuda::DevicePtr>& p) -> absl::StatusOr<PeerTime> {
      LATHE_ASSIGN_OR_RETURN(double ms, TimeMs(device, [&] {
                               return cublas->Run(n, n, n, p[0], p[1], p[2]);
                             }));
      return PeerTime{"cublasSgemm", ms};
    };
  } else {
    return std::nullopt;
  }
  std::vector<cuda::DevicePtr> buffers;
  absl::Status status;
  uint64_t state = 1;
  for (int64_t size : sizes) {
    absl::StatusOr<cuda::DevicePtr> buffer = device->Alloc(size * 4);
    if (!buffer.ok()) {
      status = buffer.status();
      break;
    }
    buffers.push_back(*buffer);
    const std::vector<float> values = UniformValues(size, &state);
    status = device->CopyToDevice(*buffer, values.data(), size * 4);
    if (!status.ok()) break;
  }
  absl::StatusOr<PeerTime> peer =
      status.ok() ? time(buffers) : absl::StatusOr<PeerTime>(status);
  for (cuda::DevicePtr buffer : buffers) device->Free(buffer);
  if (!peer.ok()) return peer.status();
  return std::optional<PeerTime>(*std::move(peer));
}

// --conv-variants: a conv2d_nchw's default GPU schedule with its ranked
// shared-memory tile (the default's) and the next kConvVariantTiles - 1
// distinct ones the ranking builds, then without one (the plain binding),
// each against cuDNN on the same inputs, each labelled with the rank it was
// asked for (CompareWithCudnn adds its launch: grid, block, shared bytes):
// the figures to check the ranking's score against. Whether every comparison
// passed.
constexpr int kConvVariantTiles = 8;
constexpr int64_t kConvVariantMaxRank = 16;
bool CompareConvVariants(cuda::CudaDevice* device, const Target& target,
                         const std::string& spec) {
  auto fail = [&](const absl::Status& status) {
    std::printf("FAIL conv variants %s: %s\n", spec.c_str(),
                std::string(status.message()).c_str());
    std::fflush(stdout);
    return false;
  };
  const std::optional<ConvShape> shape = ConvShapeOf(spec);
  if (!shape.has_value()) {
    return fail(absl::InvalidArgumentError(
        "not a conv2d_nchw spec of N, C, H, W, K, R, S, pad and stride"));
  }
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return fail(workload.status());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return fail(initial.status());
  auto schedule = [&](int64_t rank) {
    DefaultGpuScheduleOptions options =
        DefaultGpuScheduleOptionsFor(target.gpu.max_threads_per_block,
                                     target.gpu.max_shared_memory_per_block);
    options.ranked_tile = rank;
    return DefaultGpuSchedule(*initial, options);
  };
  absl::StatusOr<Trace> plain = schedule(-1);
  if (!plain.ok()) return fail(plain.status());
  bool ok = true;
  std::vector<Trace> timed;
  for (int64_t rank = 0; rank < kConvVariantMaxRank &&
                         static_cast<int>(timed.size()) < kConvVariantTiles;
       ++rank) {
    absl::StatusOr<Trace> trace = schedule(rank);
    if (!trace.ok()) return fail(trace.status());
    if (*trace == *plain) break;  // no ranked tile from this rank on
    if (std::find(timed.begin(), timed.end(), *trace) != timed.end()) continue;
    ok &= CompareWithCudnn(device, target, spec, *shape, *trace,
                           rank == 0 ? "default (ranked tile 0)"
                                     : absl::StrCat("ranked tile ", rank));
    timed.push_back(*std::move(trace));
  }
  ok &= CompareWithCudnn(device, target, spec, *shape, *plain,
                         "without a ranked tile");
  return ok;
}

// --compile-cuda ARCH: CUDA C on stdin to a cubin on stdout (the child of
// runner/cuda/child_compile.h).
int CompileCudaFromStdin(const std::string& arch) {
  std::stringstream source;
  source << std::cin.rdbuf();
  absl::StatusOr<cuda::CompiledCuda> compiled =
      cuda::CompileCuda(source.str(), arch, /*cubin=*/true);
  if (!compiled.ok()) {
    std::fprintf(stderr, "lathe-gpu-check: error: %s\n",
                 std::string(compiled.status().message()).c_str());
    return 1;
  }
  std::cout.write(compiled->cubin.data(),
                  static_cast<std::streamsize>(compiled->cubin.size()));
  std::cout.flush();
  return std::cout ? 0 : 1;
}

// This binary's path ("" when /proc cannot say).
std::string SelfPath() {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  return length > 0 ? std::string(self, static_cast<size_t>(length)) : "";
}

// --tune: a tuning run, then its best schedule against the peer: for a
// square matmul cublasSgemm, for a conv2d_nchw cuDNN.
int Tune(cuda::CudaDevice* device, const Target& target,
         GpuTuneOptions options) {
  if (options.db_path.empty()) {
    char dir[] = "/tmp/lathe_gpu_tune_XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      std::printf("lathe-gpu-check: error: cannot make a temporary folder\n");
      return 1;
    }
    options.db_path = absl::StrCat(dir, "/tune.db");
  }
  // Each candidate compiled by this binary in a child, with a deadline.
  if (const std::string self = SelfPath(); !self.empty())
    options.compile_command = {self, "--compile-cuda", target.cpu};
  options.build_threads = static_cast<int>(std::clamp<unsigned>(
                              std::thread::hardware_concurrency(), 2, 18)) -
                          2;
  absl::StatusOr<std::optional<PeerTime>> peer = TimePeer(device, options.spec);
  if (!peer.ok()) {
    std::printf("FAIL tune %s: the peer: %s\n", options.spec.c_str(),
                std::string(peer.status().message()).c_str());
    return 1;
  }
  if (peer->has_value()) {
    options.peer_name = (*peer)->name;
    options.peer_ms = (*peer)->ms;
    std::printf("tune %s: %s %.4f ms, before tuning\n", options.spec.c_str(),
                options.peer_name.c_str(), options.peer_ms);
    std::fflush(stdout);
  }
  absl::StatusOr<GpuTuneResult> tuned = TuneOnGpu(device, target, options);
  if (!tuned.ok()) {
    std::printf("FAIL tune %s: %s\n", options.spec.c_str(),
                std::string(tuned.status().message()).c_str());
    return 1;
  }
  if (!tuned->best.has_value()) {
    std::printf("FAIL tune %s: no candidate measured OK\n",
                options.spec.c_str());
    return 1;
  }
  std::printf("PASS tune %s: database %s\n", options.spec.c_str(),
              options.db_path.c_str());
  if (std::optional<ConvShape> conv = ConvShapeOf(options.spec)) {
    return CompareWithCudnn(device, target, options.spec, *conv, *tuned->best,
                            "tuned")
               ? 0
               : 1;
  }
  if (std::optional<int> n = SquareMatmulSize(options.spec)) {
    return CompareWithCublas(device, target, *n, DefaultGpuScheduleOptions{},
                             "tuned", &*tuned->best)
               ? 0
               : 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  std::string target_text = "cuda";
  std::string source_spec, ptx_spec, trace_file, ops, emit_dir;
  std::string emit_name = "lathe_kernel";
  int gemm = 4096;
  bool gemm_variants = false;
  std::string conv_variants;
  GpuTuneOptions tune;
  int no_device_exit = 2;
  bool runner_check = false;
  bool model_check = false;
  bool service_check = false;
  double simulate_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lathe-gpu-check: error: %s needs a value\n",
                     arg.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (arg == "--target")
      target_text = value();
    else if (arg == "--source")
      source_spec = value();
    else if (arg == "--ptx")
      ptx_spec = value();
    else if (arg == "--trace")
      trace_file = value();
    else if (arg == "--emit")
      emit_dir = value();
    else if (arg == "--name")
      emit_name = value();
    else if (arg == "--ops")
      ops = value();
    else if (arg == "--gemm")
      gemm = std::atoi(value().c_str());
    else if (arg == "--gemm-variants")
      gemm_variants = true;
    else if (arg == "--conv-variants")
      conv_variants = value();
    else if (arg == "--tune")
      tune.spec = value();
    else if (arg == "--trials")
      tune.trials = std::atoll(value().c_str());
    else if (arg == "--time-budget")
      tune.time_budget_s = std::atof(value().c_str());
    else if (arg == "--db")
      tune.db_path = value();
    else if (arg == "--compile-timeout")
      tune.compile_timeout_s = std::atof(value().c_str());
    else if (arg == "--compile-cuda")
      return CompileCudaFromStdin(value());
    else if (arg == "--worker")
      return runner::RunCudaMeasureWorker(
          STDIN_FILENO, STDOUT_FILENO,
          runner::SandboxConfinement(runner::WorkerKind::kCuda));
    else if (arg == "--runner-check")
      runner_check = true;
    else if (arg == "--model")
      model_check = true;
    else if (arg == "--service-check")
      service_check = true;
    else if (arg == "--simulate-ms")
      simulate_ms = std::atof(value().c_str());
    else if (arg == "--no-device-exit")
      no_device_exit = std::atoi(value().c_str());
    else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: lathe-gpu-check [--target T] [--ops 'SPEC;SPEC'] [--gemm N]\n"
          "                       [--gemm-variants] [--conv-variants "
          "'SPEC;SPEC']\n"
          "                       [--no-device-exit CODE]\n"
          "       lathe-gpu-check --source SPEC [--target T] [--trace FILE]\n"
          "       lathe-gpu-check --ptx SPEC [--target T]\n"
          "       lathe-gpu-check --source SPEC --emit DIR [--name NAME] "
          "[--target T] [--trace FILE]\n"
          "       lathe-gpu-check --tune SPEC [--trials N] [--time-budget S]\n"
          "                       [--db FILE] [--compile-timeout S] [--target "
          "T]\n"
          "       lathe-gpu-check --runner-check [--target T]\n"
          "       lathe-gpu-check --model [--target T]\n"
          "       lathe-gpu-check --service-check [--target T] "
          "[--simulate-ms MS]\n"
          "       lathe-gpu-check --worker\n"
          "       lathe-gpu-check --compile-cuda ARCH < SOURCE.cu > "
          "KERNEL.cubin\n");
      return 0;
    } else {
      std::fprintf(stderr, "lathe-gpu-check: error: unknown argument %s\n",
                   arg.c_str());
      return 1;
    }
  }
  if (!emit_dir.empty() && source_spec.empty()) {
    std::fprintf(stderr,
                 "lathe-gpu-check: error: --emit needs --source SPEC\n");
    return 1;
  }
  if (!source_spec.empty() || !ptx_spec.empty()) {
    if (target_text == "cuda") target_text = "cuda -arch=sm_90";
    return PrintSource(source_spec.empty() ? ptx_spec : source_spec,
                       target_text, trace_file, !ptx_spec.empty(), emit_dir,
                       emit_name);
  }
  if (service_check && simulate_ms > 0) {
    if (target_text == "cuda") target_text = "cuda -arch=sm_90";
    absl::StatusOr<Target> target = TargetFor(target_text);
    if (!target.ok()) {
      std::printf("lathe-gpu-check: error: %s\n",
                  std::string(target.status().message()).c_str());
      return 1;
    }
    return CheckService(SelfPath(), *target, "simulated", simulate_ms) ? 0 : 1;
  }
  std::printf("lathe-gpu-check: loading NVRTC and the CUDA driver\n");
  std::fflush(stdout);
  if (absl::Status s = cuda::CheckNvrtc(); !s.ok()) {
    std::printf("lathe-gpu-check: error: %s\n",
                std::string(s.message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device =
      cuda::CudaDevice::Open(0);
  if (!device.ok()) {
    std::printf("lathe-gpu-check: no device: %s\n",
                std::string(device.status().message()).c_str());
    return no_device_exit;
  }
  const cuda::DeviceInfo& info = (*device)->info();
  std::printf(
      "lathe-gpu-check: device %s (%s, %d SMs, driver %d), limits: %d "
      "threads/block, %d B shared/block, %d registers/block, warp %d\n",
      info.name.c_str(), info.arch.c_str(), info.multiprocessors,
      info.driver_version, info.limits.max_threads_per_block,
      info.limits.max_shared_memory_per_block, info.limits.registers_per_block,
      info.limits.warp_size);
  absl::StatusOr<Target> target = TargetFor(target_text);
  if (!target.ok()) {
    std::printf("lathe-gpu-check: error: %s\n",
                std::string(target.status().message()).c_str());
    return 1;
  }
  std::printf("lathe-gpu-check: target %s\n", target->ToString().c_str());
  if (!tune.spec.empty()) return Tune(device->get(), *target, tune);
  if (model_check) return CheckModels(*target) ? 0 : 1;
  if (runner_check) {
    // The workers open the device themselves.
    device->reset();
    return CheckRunner(SelfPath(), *target) ? 0 : 1;
  }
  if (service_check) {
    const std::string name = info.name;
    device->reset();
    return CheckService(SelfPath(), *target, name) ? 0 : 1;
  }
  std::vector<std::string> specs =
      ops.empty() ? AllSpecs()
                  : std::vector<std::string>(
                        absl::StrSplit(ops, ';', absl::SkipEmpty()));
  if (ops.empty()) {
    specs.push_back("custom:C[i,j] += A[i,k] * B[k,j]|i=256,j=384,k=128");
    // Every math function of the IR, from CUDA's math library.
    specs.push_back(
        "custom:Y[i,j] = erf(A[i,j]) + pow(abs(A[i,j]) + 1.0, B[i,j]) + "
        "tanh(B[i,j]) * exp(A[i,j]) - log(abs(B[i,j]) + 1.0) + "
        "sqrt(abs(A[i,j]))|i=64,j=333");
    // One output: one block, its partial sums in device memory.
    specs.push_back("custom:input in0[6480]; out[v0] += in0[v1]|v0=1,v1=6480");
  }
  int passed = 0, failed = 0;
  for (const std::string& spec : specs) {
    (CheckOne(device->get(), *target, spec) ? passed : failed)++;
  }
  if (ops.empty()) {
    (ProbeDeviceCheck(device->get(), *target) ? passed : failed)++;
  }
  if (gemm > 0) {
    const DefaultGpuScheduleOptions options =
        DefaultGpuScheduleOptionsFor(target->gpu.max_threads_per_block,
                                     target->gpu.max_shared_memory_per_block);
    (CompareWithCublas(device->get(), *target, gemm, options, "default")
         ? passed
         : failed)++;
    // The shared-memory tile's parameters the default fixes, each tried:
    // what a GPU design space would sample.
    for (int64_t chunk : gemm_variants ? std::vector<int64_t>{8, 16, 32}
                                       : std::vector<int64_t>{}) {
      for (auto [registers, groups] :
           {std::pair{8, 1}, std::pair{8, 2}, std::pair{4, 1}}) {
        DefaultGpuScheduleOptions variant = options;
        variant.shared_tile_k_chunk = chunk;
        variant.shared_tile_max_registers = registers;
        variant.shared_tile_register_groups = groups;
        (CompareWithCublas(device->get(), *target, gemm, variant,
                           absl::StrCat("k-chunk ", chunk, " registers<=",
                                        registers, " in ", groups, " groups"))
             ? passed
             : failed)++;
      }
    }
  }
  for (const std::string& spec : std::vector<std::string>(
           absl::StrSplit(conv_variants, ';', absl::SkipEmpty()))) {
    (CompareConvVariants(device->get(), *target, spec) ? passed : failed)++;
  }
  std::printf("lathe-gpu-check: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace lathe::tools

int main(int argc, char** argv) { return lathe::tools::Main(argc, argv); }

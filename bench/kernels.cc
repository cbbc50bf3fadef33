// bench_kernels: Lathe's hand-scheduled kernels against the libraries they
// must match, in one process, on 1 and 2 threads (issue 3's benchmark):
//   (a) fp32 matmul 1024^3 and 2048^3 against OpenBLAS cblas_sgemm;
//   (b) conv2d_nchw N=1 C=K=128 28x28 3x3 pad 1 against oneDNN's convolution
//       in the layouts oneDNN prefers (format_tag::any);
//   (c) the compile time of one kernel (lower + LLVM O3 + JIT), median of 20.
// The schedules are trace files (bench/traces/*.json, written by
// bench_make_traces) replayed here. Every Lathe kernel is checked against the
// peer's result before it is timed. Timings interleave the two sides
// (Lathe, peer, Lathe, peer, ...) and report medians; compare the ratios.
//
// Run it with OpenBLAS free to pick its own kernel (bench/README.md):
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/bench_kernels
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/llvm/object_emitter.h"
#include "compiler/codegen/target.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "compiler/util/check.h"
#include "compiler/workload/spec.h"
#include "oneapi/dnnl/dnnl.hpp"

extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int num_threads);

namespace lathe {
namespace {

#ifndef LATHE_BENCH_TRACES_DIR
#define LATHE_BENCH_TRACES_DIR "bench/traces"
#endif

struct Options {
  std::string traces_dir = LATHE_BENCH_TRACES_DIR;
  std::vector<int> threads = {1, 2};
  int rounds = 15;  // interleaved samples per side (fewer for long kernels)
  bool matmul = true, conv = true, compile = true;
  std::string dump;
  std::string conv_trace = "conv2d_128x28.json";  // under traces_dir
  std::string matmul_trace;  // under traces_dir; default matmul_N.json  // write DUMP.ll / DUMP.o of each kernel instead of timing
};

// A 64-byte aligned float array.
struct Floats {
  explicit Floats(size_t n) : size(n), data(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64))) {
    std::memset(data, 0, n * 4);
  }
  ~Floats() { std::free(data); }
  Floats(const Floats&) = delete;
  Floats& operator=(const Floats&) = delete;
  size_t size;
  float* data;
};

void FillUniform(Floats* f, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < f->size; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    f->data[i] = static_cast<float>((s >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
  }
}

double NowSec() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Max abs error and max error relative to the largest |expected|.
struct Error {
  double abs = 0, rel = 0;
};
Error Compare(const float* got, const float* want, size_t n) {
  double max_ref = 0, max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[i])));
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= max_abs)) max_abs = d;  // NaN propagates
  }
  return {max_abs, max_ref > 0 ? max_abs / max_ref : max_abs};
}

// Lets the worker threads of the side that just ran go idle. Lathe's pool
// and OpenMP (oneDNN) / OpenBLAS's threads spin for a while after a
// parallel region (libgomp: up to ~5 ms by default); on a 2-core machine a
// spinning pool steals a core from the other side's next call. Not timed.
void Settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// Interleaves calls of a and b (after warm-up) and returns their median times.
std::pair<double, double> TimeInterleaved(const std::function<void()>& a, const std::function<void()>& b,
                                          int rounds) {
  for (int w = 0; w < 2; ++w) {
    a();
    b();
  }
  std::vector<double> ta, tb;
  for (int r = 0; r < rounds; ++r) {
    Settle();
    double t0 = NowSec();
    a();
    double t1 = NowSec();
    Settle();
    double t2 = NowSec();
    b();
    double t3 = NowSec();
    ta.push_back(t1 - t0);
    tb.push_back(t3 - t2);
  }
  return {Median(ta), Median(tb)};
}

// Replays a trace file on its workload and lowers the result.
absl::StatusOr<Program> LoadScheduled(const std::string& spec, const std::string& path) {
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program initial, w.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(Trace trace, Trace::Load(path));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> sch, ReplayTrace(trace, initial));
  return LowerProgram(sch->program());
}

void SetPeerThreads(int n) {
  openblas_set_num_threads(n);
  omp_set_num_threads(n);
}

void PrintRow(const std::string& what, int threads, double flops, double t_lathe, double t_peer,
              const char* peer) {
  std::printf("%-34s %d thr  lathe %7.1f GFLOP/s (%8.3f ms)  %-8s %7.1f GFLOP/s (%8.3f ms)  ratio %.2f\n",
              what.c_str(), threads, flops / t_lathe * 1e-9, t_lathe * 1e3, peer, flops / t_peer * 1e-9,
              t_peer * 1e3, t_peer / t_lathe);
  std::fflush(stdout);
}

// Writes the optimized LLVM IR and the object file of a kernel, for reading
// its inner loop (llvm-objdump -d --no-show-raw-insn DUMP.o).
absl::Status Dump(const Program& lowered, const std::string& name, const Options& opt, int threads) {
  std::string prefix = absl::StrCat(opt.dump, name, "_t", threads);
  LATHE_ASSIGN_OR_RETURN(std::string ir, GenerateLLVMIR(lowered, HostTarget(threads)));
  std::ofstream(prefix + ".ll") << ir;
  LATHE_RETURN_IF_ERROR(EmitObjectFile(lowered, HostTarget(threads), prefix + ".o"));
  std::printf("wrote %s.ll and %s.o\n", prefix.c_str(), prefix.c_str());
  return absl::OkStatus();
}

// ---- (a) matmul against cblas_sgemm ------------------------------------------

absl::Status BenchMatmul(const Options& opt, int64_t n, const std::string& trace_file) {
  const std::string spec = absl::StrCat("matmul:M=", n, ",N=", n, ",K=", n);
  LATHE_ASSIGN_OR_RETURN(Program lowered, LoadScheduled(spec, opt.traces_dir + "/" + trace_file));
  Floats a(n * n), b(n * n), c_lathe(n * n), c_peer(n * n);
  FillUniform(&a, 1);
  FillUniform(&b, 2);
  const double flops = 2.0 * n * n * n;
  if (!opt.dump.empty()) {
    for (int threads : opt.threads) LATHE_RETURN_IF_ERROR(Dump(lowered, absl::StrCat("matmul", n), opt, threads));
    return absl::OkStatus();
  }
  const int rounds = n >= 2048 ? std::max(3, opt.rounds / 3) : opt.rounds;
  for (int threads : opt.threads) {
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel, Compile(lowered, HostTarget(threads)));
    SetPeerThreads(threads);
    auto run_lathe = [&] { kernel.Call({a.data, b.data, c_lathe.data}); };
    auto run_peer = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data, n, b.data, n, 0.0f,
                  c_peer.data, n);
    };
    // 1. Correctness first: the same inputs through both.
    std::memset(c_lathe.data, 0xff, n * n * 4);  // NaNs: unwritten elements show
    LATHE_RETURN_IF_ERROR(kernel.Run({a.data, b.data, c_lathe.data}));
    run_peer();
    Error e = Compare(c_lathe.data, c_peer.data, n * n);
    std::printf("%-34s %d thr  check vs OpenBLAS: max abs err %.3g, max rel err %.3g\n", spec.c_str(), threads,
                e.abs, e.rel);
    if (!(e.rel < 1e-4)) return absl::InternalError(absl::StrCat(spec, ": wrong result (rel err ", e.rel, ")"));
    // 2. Time, interleaved.
    auto [tl, tp] = TimeInterleaved(run_lathe, run_peer, rounds);
    PrintRow(spec, threads, flops, tl, tp, "openblas");
  }
  return absl::OkStatus();
}

// ---- (b) conv2d against oneDNN -----------------------------------------------

absl::Status BenchConv(const Options& opt, const std::string& trace_file) {
  // conv2d_nchw: X[N,C,H,W], W[K,C,R,S] -> Y[N,K,P,Q], stride 1, pad 1.
  const int64_t N = 1, C = 128, H = 28, W = 28, K = 128, R = 3, S = 3, pad = 1;
  const int64_t P = H + 2 * pad - R + 1, Q = W + 2 * pad - S + 1;
  const std::string spec = absl::StrCat("conv2d_nchw:N=", N, ",C=", C, ",H=", H, ",W=", W, ",K=", K, ",R=", R,
                                        ",S=", S, ",pad=", pad);
  const std::string path = opt.traces_dir + "/" + trace_file;
  if (!std::ifstream(path).good()) {
    std::printf("%s: no trace %s, skipped\n", spec.c_str(), path.c_str());
    return absl::OkStatus();
  }
  LATHE_ASSIGN_OR_RETURN(Program lowered, LoadScheduled(spec, path));
  if (!opt.dump.empty()) {
    for (int threads : opt.threads) LATHE_RETURN_IF_ERROR(Dump(lowered, "conv2d", opt, threads));
    return absl::OkStatus();
  }
  Floats x(N * C * H * W), w(K * C * R * S), y_lathe(N * K * P * Q), y_peer(N * K * P * Q);
  FillUniform(&x, 3);
  FillUniform(&w, 4);
  const double flops = 2.0 * N * K * P * Q * C * R * S;  // nominal, padding taps included

  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  dnnl::memory::dims src_dims = {N, C, H, W}, wei_dims = {K, C, R, S}, dst_dims = {N, K, P, Q};
  dnnl::memory::desc src_any(src_dims, dt::f32, tag::any), wei_any(wei_dims, dt::f32, tag::any),
      dst_any(dst_dims, dt::f32, tag::any);
  for (int threads : opt.threads) {
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel, Compile(lowered, HostTarget(threads)));
    SetPeerThreads(threads);
    // oneDNN sizes its work split by the thread count at creation: create
    // the primitive after setting it.
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         src_any, wei_any, dst_any, {1, 1}, {pad, pad}, {pad, pad});
    dnnl::convolution_forward::primitive_desc pd(desc, eng);
    std::printf("oneDNN %d.%d.%d conv impl (%d threads): %s\n", dnnl_version()->major, dnnl_version()->minor,
                dnnl_version()->patch, threads, pd.impl_info_str());
    // The user's NCHW / OIHW tensors, reordered once into oneDNN's layouts
    // (outside the timed region: weights are constants at deployment, and the
    // activations arrive in whatever layout the previous layer left).
    dnnl::memory x_user({src_dims, dt::f32, tag::nchw}, eng, x.data);
    dnnl::memory w_user({wei_dims, dt::f32, tag::oihw}, eng, w.data);
    dnnl::memory y_user({dst_dims, dt::f32, tag::nchw}, eng, y_peer.data);
    dnnl::memory x_mem(pd.src_desc(), eng), w_mem(pd.weights_desc(), eng), y_mem(pd.dst_desc(), eng);
    dnnl::reorder(x_user, x_mem).execute(strm, x_user, x_mem);
    dnnl::reorder(w_user, w_mem).execute(strm, w_user, w_mem);
    dnnl::convolution_forward conv(pd);
    strm.wait();
    auto run_lathe = [&] { kernel.Call({x.data, w.data, y_lathe.data}); };
    auto run_peer = [&] {
      conv.execute(strm, {{DNNL_ARG_SRC, x_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, y_mem}});
      strm.wait();
    };
    std::memset(y_lathe.data, 0xff, y_lathe.size * 4);
    LATHE_RETURN_IF_ERROR(kernel.Run({x.data, w.data, y_lathe.data}));
    run_peer();
    dnnl::reorder(y_mem, y_user).execute(strm, y_mem, y_user);
    strm.wait();
    Error e = Compare(y_lathe.data, y_peer.data, y_peer.size);
    std::printf("%-34s %d thr  check vs oneDNN: max abs err %.3g, max rel err %.3g\n", "conv2d_nchw 128x28x28 3x3",
                threads, e.abs, e.rel);
    if (!(e.rel < 1e-4)) return absl::InternalError(absl::StrCat(spec, ": wrong result (rel err ", e.rel, ")"));
    auto [tl, tp] = TimeInterleaved(run_lathe, run_peer, opt.rounds * 4);
    PrintRow("conv2d_nchw 128x28x28 3x3 pad 1", threads, flops, tl, tp, "onednn");
  }
  return absl::OkStatus();
}

// ---- (c) compile time --------------------------------------------------------

absl::Status BenchCompile(const Options& opt, const std::string& trace_file) {
  const std::string spec = "matmul:M=1024,N=1024,K=1024";
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program initial, w.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(Trace trace, Trace::Load(opt.traces_dir + "/" + trace_file));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> sch, ReplayTrace(trace, initial));
  std::vector<double> total, lower, codegen, optimize, machine, link;
  for (int i = 0; i < 21; ++i) {
    double t0 = NowSec();
    LATHE_ASSIGN_OR_RETURN(Program lowered, LowerProgram(sch->program()));
    double t1 = NowSec();
    CodegenOptions options;
    // A fresh name per round, so the compile cache never answers.
    options.function_name = absl::StrCat("compile_time_", i);
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel, Compile(lowered, HostTarget(2), options));
    double t2 = NowSec();
    if (kernel.from_cache()) return absl::InternalError("compile time: the kernel came from the cache");
    if (i == 0) continue;  // the first compile also initializes LLVM and the JIT
    total.push_back((t2 - t0) * 1e3);
    lower.push_back((t1 - t0) * 1e3);
    codegen.push_back(kernel.times().codegen_ms);
    optimize.push_back(kernel.times().optimize_ms);
    machine.push_back(kernel.times().machine_code_ms);
    link.push_back(kernel.times().link_ms);
  }
  std::printf(
      "compile time, %s (%s), median of %zu: %.1f ms (lower %.1f, codegen %.1f, O3 %.1f, machine code %.1f, "
      "link %.1f)\n",
      spec.c_str(), trace_file.c_str(), total.size(), Median(total), Median(lower), Median(codegen),
      Median(optimize), Median(machine), Median(link));
  return absl::OkStatus();
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--traces") {
      opt.traces_dir = value();
    } else if (a == "--threads") {
      opt.threads.clear();
      std::string v = value();
      for (char ch : v) {
        if (ch >= '1' && ch <= '9') opt.threads.push_back(ch - '0');
      }
    } else if (a == "--rounds") {
      opt.rounds = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--matmul-trace") {
      opt.matmul_trace = value();
    } else if (a == "--conv-trace") {
      opt.conv_trace = value();
    } else if (a == "--dump") {
      opt.dump = value();
      opt.compile = false;
    } else if (a == "--only") {
      std::string v = value();
      opt.matmul = v.find("matmul") != std::string::npos;
      opt.conv = v.find("conv") != std::string::npos;
      opt.compile = v.find("compile") != std::string::npos;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--traces DIR] [--threads 1,2] [--rounds N] [--only matmul,conv,compile] [--matmul-trace FILE] [--conv-trace FILE] [--dump PREFIX]\n",
                   argv[0]);
      return 2;
    }
  }
  Target host = HostTarget(1);
  std::printf("machine: %s, %ld cpus; target %s\n", CpuModel().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
              host.ToString().c_str());
  std::printf("OpenBLAS core: %s (OPENBLAS_CORETYPE=%s)\n", openblas_get_corename(),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
  if (std::getenv("OPENBLAS_CORETYPE")) {
    std::printf("warning: OPENBLAS_CORETYPE pins OpenBLAS's kernel; run under env -u OPENBLAS_CORETYPE\n");
  }
  std::printf("ratio = lathe GFLOP/s / peer GFLOP/s; medians of interleaved runs\n");
  absl::Status st;
  if (st.ok() && opt.compile) st = BenchCompile(opt, "matmul_1024.json");
  if (!opt.matmul_trace.empty()) {
    int64_t n = opt.matmul_trace.find("2048") != std::string::npos ? 2048 : 1024;
    if (st.ok() && opt.matmul) st = BenchMatmul(opt, n, opt.matmul_trace);
  } else {
    if (st.ok() && opt.matmul) st = BenchMatmul(opt, 1024, "matmul_1024.json");
    if (st.ok() && opt.matmul) st = BenchMatmul(opt, 2048, "matmul_2048.json");
  }
  if (st.ok() && opt.conv) st = BenchConv(opt, opt.conv_trace);
  if (!st.ok()) {
    std::fprintf(stderr, "bench_kernels: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }

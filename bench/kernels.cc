// bench_kernels: Lathe's hand-scheduled kernels against the libraries they
// must match, in one process, on 1 and 2 threads:
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
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/peers.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/llvm/object_emitter.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"

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
  std::string
      matmul_trace;  // under traces_dir; default matmul_N.json  // write
                     // DUMP.ll / DUMP.o of each kernel instead of timing
};

using bench::Compare;
using bench::Error;
using bench::FillUniform;
using bench::Floats;
using bench::Median;
using bench::NowSec;
using bench::SetPeerThreads;
using bench::TimeInterleaved;

// Replays a trace file on its workload and lowers the result.
absl::StatusOr<Program> LoadScheduled(const std::string& spec,
                                      const std::string& path) {
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program initial, w.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(Trace trace, Trace::Load(path));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> sch,
                         ReplayTrace(trace, initial));
  return LowerProgram(sch->program());
}

void PrintRow(const std::string& what, int threads, double flops,
              const bench::InterleavedTimes& t, const char* peer) {
  std::printf(
      "%-34s %d thr  lathe %7.1f GFLOP/s (%8.3f ms)  %-8s %7.1f GFLOP/s (%8.3f "
      "ms)  ratio %.2f"
      "  (second calls: %.3f / %.3f ms, ratio %.2f)\n",
      what.c_str(), threads, flops / t.a_s * 1e-9, t.a_s * 1e3, peer,
      flops / t.b_s * 1e-9, t.b_s * 1e3, t.b_s / t.a_s, t.a_warm_s * 1e3,
      t.b_warm_s * 1e3, t.b_warm_s / t.a_warm_s);
  std::fflush(stdout);
}

// Writes the optimized LLVM IR and the object file of a kernel, for reading
// its inner loop (llvm-objdump -d --no-show-raw-insn DUMP.o).
absl::Status Dump(const Program& lowered, const std::string& name,
                  const Options& opt, int threads) {
  std::string prefix = absl::StrCat(opt.dump, name, "_t", threads);
  LATHE_ASSIGN_OR_RETURN(std::string ir,
                         GenerateLLVMIR(lowered, HostTarget(threads)));
  std::ofstream(prefix + ".ll") << ir;
  LATHE_RETURN_IF_ERROR(
      EmitObjectFile(lowered, HostTarget(threads), prefix + ".o"));
  std::printf("wrote %s.ll and %s.o\n", prefix.c_str(), prefix.c_str());
  return absl::OkStatus();
}

// ---- (a) matmul against cblas_sgemm
// ------------------------------------------

absl::Status BenchMatmul(const Options& opt, int64_t n,
                         const std::string& trace_file) {
  const std::string spec = absl::StrCat("matmul:M=", n, ",N=", n, ",K=", n);
  LATHE_ASSIGN_OR_RETURN(
      Program lowered, LoadScheduled(spec, opt.traces_dir + "/" + trace_file));
  Floats a(n * n), b(n * n), c_lathe(n * n), c_peer(n * n);
  FillUniform(&a, 1);
  FillUniform(&b, 2);
  const double flops = 2.0 * n * n * n;
  if (!opt.dump.empty()) {
    for (int threads : opt.threads)
      LATHE_RETURN_IF_ERROR(
          Dump(lowered, absl::StrCat("matmul", n), opt, threads));
    return absl::OkStatus();
  }
  const int rounds = n >= 2048 ? std::max(3, opt.rounds / 3) : opt.rounds;
  for (int threads : opt.threads) {
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel,
                           Compile(lowered, HostTarget(threads)));
    SetPeerThreads(threads);
    auto run_lathe = [&] { kernel.Call({a.data, b.data, c_lathe.data}); };
    auto run_peer = [&] { bench::Sgemm(n, n, n, a.data, b.data, c_peer.data); };
    // 1. Correctness first: the same inputs through both.
    std::memset(c_lathe.data, 0xff,
                n * n * 4);  // NaNs: unwritten elements show
    LATHE_RETURN_IF_ERROR(kernel.Run({a.data, b.data, c_lathe.data}));
    run_peer();
    Error e = Compare(c_lathe.data, c_peer.data, n * n);
    std::printf(
        "%-34s %d thr  check vs OpenBLAS: max abs err %.3g, max rel err %.3g\n",
        spec.c_str(), threads, e.abs, e.rel);
    if (!(e.rel < 1e-4))
      return absl::InternalError(
          absl::StrCat(spec, ": wrong result (rel err ", e.rel, ")"));
    // 2. Time, interleaved.
    PrintRow(spec, threads, flops, TimeInterleaved(run_lathe, run_peer, rounds),
             "openblas");
  }
  return absl::OkStatus();
}

// ---- (b) conv2d against oneDNN
// -----------------------------------------------

absl::Status BenchConv(const Options& opt, const std::string& trace_file) {
  const bench::ConvShape shape{/*n=*/1,   /*c=*/128, /*h=*/28, /*w=*/28,
                               /*k=*/128, /*r=*/3,   /*s=*/3,  /*pad=*/1};
  const std::string spec = shape.Spec();
  const std::string path = opt.traces_dir + "/" + trace_file;
  if (!std::ifstream(path).good()) {
    std::printf("%s: no trace %s, skipped\n", spec.c_str(), path.c_str());
    return absl::OkStatus();
  }
  LATHE_ASSIGN_OR_RETURN(Program lowered, LoadScheduled(spec, path));
  if (!opt.dump.empty()) {
    for (int threads : opt.threads)
      LATHE_RETURN_IF_ERROR(Dump(lowered, "conv2d", opt, threads));
    return absl::OkStatus();
  }
  Floats x(shape.n * shape.c * shape.h * shape.w),
      w(shape.k * shape.c * shape.r * shape.s),
      y_lathe(shape.n * shape.k * shape.p() * shape.q()),
      y_peer(shape.n * shape.k * shape.p() * shape.q());
  FillUniform(&x, 3);
  FillUniform(&w, 4);
  const double flops = shape.Flops();  // nominal, padding taps included
  for (int threads : opt.threads) {
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel,
                           Compile(lowered, HostTarget(threads)));
    std::unique_ptr<bench::OneDnnConv> conv =
        bench::OneDnnConv::Create(shape, threads, x.data, w.data);
    std::printf("oneDNN %s conv impl (%d threads): %s\n",
                bench::OneDnnConv::Version().c_str(), threads,
                conv->Impl().c_str());
    auto run_lathe = [&] { kernel.Call({x.data, w.data, y_lathe.data}); };
    auto run_peer = [&] { conv->Run(); };
    std::memset(y_lathe.data, 0xff, y_lathe.size * 4);
    LATHE_RETURN_IF_ERROR(kernel.Run({x.data, w.data, y_lathe.data}));
    run_peer();
    conv->CopyOutput(y_peer.data);
    Error e = Compare(y_lathe.data, y_peer.data, y_peer.size);
    std::printf(
        "%-34s %d thr  check vs oneDNN: max abs err %.3g, max rel err %.3g\n",
        "conv2d_nchw 128x28x28 3x3", threads, e.abs, e.rel);
    if (!(e.rel < 1e-4))
      return absl::InternalError(
          absl::StrCat(spec, ": wrong result (rel err ", e.rel, ")"));
    PrintRow("conv2d_nchw 128x28x28 3x3 pad 1", threads, flops,
             TimeInterleaved(run_lathe, run_peer, opt.rounds * 4), "onednn");
  }
  return absl::OkStatus();
}

// ---- (c) compile time
// --------------------------------------------------------

absl::Status BenchCompile(const Options& opt, const std::string& trace_file) {
  const std::string spec = "matmul:M=1024,N=1024,K=1024";
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program initial, w.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(Trace trace,
                         Trace::Load(opt.traces_dir + "/" + trace_file));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> sch,
                         ReplayTrace(trace, initial));
  std::vector<double> total, lower, codegen, optimize, machine, link;
  for (int i = 0; i < 21; ++i) {
    double t0 = NowSec();
    LATHE_ASSIGN_OR_RETURN(Program lowered, LowerProgram(sch->program()));
    double t1 = NowSec();
    CodegenOptions options;
    // A fresh name per round, so the compile cache never answers.
    options.function_name = absl::StrCat("compile_time_", i);
    LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel,
                           Compile(lowered, HostTarget(2), options));
    double t2 = NowSec();
    if (kernel.from_cache())
      return absl::InternalError(
          "compile time: the kernel came from the cache");
    if (i == 0)
      continue;  // the first compile also initializes LLVM and the JIT
    total.push_back((t2 - t0) * 1e3);
    lower.push_back((t1 - t0) * 1e3);
    codegen.push_back(kernel.times().codegen_ms);
    optimize.push_back(kernel.times().optimize_ms);
    machine.push_back(kernel.times().machine_code_ms);
    link.push_back(kernel.times().link_ms);
  }
  std::printf(
      "compile time, %s (%s), median of %zu: %.1f ms (lower %.1f, codegen "
      "%.1f, O3 %.1f, machine code %.1f, "
      "link %.1f)\n",
      spec.c_str(), trace_file.c_str(), total.size(), Median(total),
      Median(lower), Median(codegen), Median(optimize), Median(machine),
      Median(link));
  return absl::OkStatus();
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
                   "usage: %s [--traces DIR] [--threads 1,2] [--rounds N] "
                   "[--only matmul,conv,compile] [--matmul-trace FILE] "
                   "[--conv-trace FILE] [--dump PREFIX]\n",
                   argv[0]);
      return 2;
    }
  }
  Target host = HostTarget(1);
  std::printf("machine: %s, %ld cpus; target %s\n", bench::CpuModel().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), host.ToString().c_str());
  bench::PinLatheThreads();
  bench::PrintOpenBlasCore();
  std::printf(
      "ratio = lathe GFLOP/s / peer GFLOP/s; medians of interleaved runs\n");
  absl::Status st;
  if (st.ok() && opt.compile) st = BenchCompile(opt, "matmul_1024.json");
  if (!opt.matmul_trace.empty()) {
    int64_t n =
        opt.matmul_trace.find("2048") != std::string::npos ? 2048 : 1024;
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

int main(int argc, char** argv) {
  lathe::bench::RunOnFairOpenBlasCore(argv);
  return lathe::Main(argc, argv);
}

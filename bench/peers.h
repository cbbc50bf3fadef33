// What the benchmarks against libraries share (bench_kernels: kernels.cc,
// bench_tune: tune.cc): the peers Lathe's kernels are measured against --
// OpenBLAS's sgemm and oneDNN's convolution in the layouts it prefers -- and
// the fair method of bench/README.md: reproducible inputs, a check of Lathe's
// output against the peer's, and interleaved timing (A B A B ..., each call
// after a pause that lets the other side's spinning workers go idle; medians).
//
// Bench-only: built only when OpenBLAS and oneDNN are found
// (bench/CMakeLists.txt). The numbers these helpers produce are checked by
// hand against bench/README.md, "Peers"; the bench's own arithmetic (curves,
// means) lives in tuning_curve.h, which has tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lathe::bench {

// A 64-byte aligned float array, zeroed.
struct Floats {
  explicit Floats(size_t n);
  ~Floats();
  Floats(const Floats&) = delete;
  Floats& operator=(const Floats&) = delete;
  size_t size;
  float* data;
};

// Uniform values in [-1, 1) from a seed (the same on every machine).
void FillUniform(Floats* f, uint64_t seed);

// Monotonic seconds.
double NowSec();
double Median(std::vector<double> v);

// Max abs error and max error relative to the largest |want|; NaN in `got`
// propagates (an unwritten element shows).
struct Error {
  double abs = 0, rel = 0;
};
Error Compare(const float* got, const float* want, size_t n);

// Lets the worker threads of the side that just ran go idle: Lathe's pool,
// OpenMP's (oneDNN) and OpenBLAS's threads spin for a while after a parallel
// region (libgomp: up to ~5 ms by default); on a 2-core machine a spinning
// pool steals a core from the other side's next call. Not timed.
void Settle();

// Median seconds of each side, as its first call after settling and as the
// call right after that one. Both readings, because the first call after
// idle pays for waking up on this VM (oneDNN's 2-thread conv: 1.3 ms against
// 1.1 for the next; Lathe's 1-thread matmul: 26.5 against 21.9 ms), and how
// much differs between the two sides (bench/README.md, "Why the code is
// as it is").
struct InterleavedTimes {
  double a_s = 0, b_s = 0;            // the first call after Settle
  double a_warm_s = 0, b_warm_s = 0;  // the call right after it
};

// Two warm-up calls of each, then `rounds` rounds of Settle, a, a, Settle,
// b, b, each call timed.
InterleavedTimes TimeInterleaved(const std::function<void()>& a,
                                 const std::function<void()>& b, int rounds);

// /proc/cpuinfo's model name.
std::string CpuModel();

// Re-executes this program (argv as main got it) with OPENBLAS_CORETYPE set
// to a wider kernel when OpenBLAS chose one narrower than the CPU runs
// (openblas_core.h: Debian's OpenBLAS falls back to SSE3 on CPUs newer than
// it). Does nothing when the user set OPENBLAS_CORETYPE. Call it first in
// main, before any thread starts.
void RunOnFairOpenBlasCore(char** argv);

// Prints the kernel OpenBLAS runs (openblas_get_corename) and warns when
// OPENBLAS_CORETYPE pins it (bench/README.md, "Peers": run under env -u
// OPENBLAS_CORETYPE).
void PrintOpenBlasCore();

// Pins Lathe's parallel-loop threads (LATHE_PIN_THREADS=1) unless the
// environment says otherwise, before any kernel runs, and prints which. The
// runner measures pinned (docs/architecture.md, "Measurement"); unpinned, in a
// process that also holds OpenBLAS's and oneDNN's threads, Lathe's two workers
// were often placed on one CPU: a tuned 2-thread matmul measured 1.14-1.17x
// OpenBLAS pinned and 0.72x unpinned in the same session.
void PinLatheThreads();

// The thread count of both peers (OpenBLAS and OpenMP, which oneDNN runs on).
void SetPeerThreads(int n);

// OpenBLAS cblas_sgemm, row-major: c[m,n] = a[m,k] * b[k,n].
void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
           float* c);

// A conv2d_nchw of stride 1 (X[N,C,H,W], W[K,C,R,S] -> Y[N,K,P,Q]).
struct ConvShape {
  int64_t n, c, h, w, k, r, s, pad;
  int64_t p() const { return h + 2 * pad - r + 1; }
  int64_t q() const { return w + 2 * pad - s + 1; }
  // The Lathe spec, e.g. conv2d_nchw:N=1,C=128,...,pad=1.
  std::string Spec() const;
  // Nominal: padding taps counted (as Lathe's FlopCount does).
  double Flops() const;
};

// oneDNN's forward convolution created with format_tag::any (it picks its
// own layouts: brgconv, NHWC-blocked, on AVX-512), on inputs given in
// NCHW / OIHW and reordered once into its layouts, outside any timed region:
// weights are constants at deployment, and activations arrive in whatever
// layout the previous layer left.
class OneDnnConv {
 public:
  // Sets the peers' thread count to `threads` first: oneDNN sizes its work
  // split by the thread count when the primitive is created. `x` and `w`
  // must stay alive as long as this object.
  static std::unique_ptr<OneDnnConv> Create(const ConvShape& shape, int threads,
                                            const float* x, const float* w);
  ~OneDnnConv();
  // One convolution, waited for (what is timed).
  void Run();
  // The last Run's output reordered into NCHW.
  void CopyOutput(float* y);
  // impl_info_str(), e.g. "brgconv:avx512_core".
  std::string Impl() const;
  // "2.6.3".
  static std::string Version();

 private:
  struct State;
  explicit OneDnnConv(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace lathe::bench

#include "bench/peers.h"

#include <cblas.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/openblas_core.h"
#include "oneapi/dnnl/dnnl.hpp"

extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int num_threads);

namespace lathe::bench {

Floats::Floats(size_t n)
    : size(n),
      data(
          static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64))) {
  std::memset(data, 0, n * 4);
}

Floats::~Floats() { std::free(data); }

void FillUniform(Floats* f, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < f->size; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    f->data[i] =
        static_cast<float>((s >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
  }
}

double NowSec() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Error Compare(const float* got, const float* want, size_t n) {
  double max_ref = 0, max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[i])));
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= max_abs)) max_abs = d;  // NaN propagates
  }
  return {max_abs, max_ref > 0 ? max_abs / max_ref : max_abs};
}

// Long enough for the other side's idle workers to stop spinning: OpenBLAS's
// pthread server keeps calling sched_yield for 2^28 cycles (~75 ms here)
// after a call before it sleeps, and on 2 threads that took a core from the
// next Lathe call (20 ms of settling halved it in bench_tune's comparison).
void Settle() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

InterleavedTimes TimeInterleaved(const std::function<void()>& a,
                                 const std::function<void()>& b, int rounds) {
  for (int w = 0; w < 2; ++w) {
    a();
    b();
  }
  // Seconds of the first and of the second call of `f`, back to back.
  auto time_twice = [](const std::function<void()>& f) {
    const double t0 = NowSec();
    f();
    const double t1 = NowSec();
    f();
    const double t2 = NowSec();
    return std::pair<double, double>(t1 - t0, t2 - t1);
  };
  std::vector<double> ta, tb, ta_warm, tb_warm;
  for (int r = 0; r < rounds; ++r) {
    Settle();
    auto [a_first, a_second] = time_twice(a);
    Settle();
    auto [b_first, b_second] = time_twice(b);
    ta.push_back(a_first);
    ta_warm.push_back(a_second);
    tb.push_back(b_first);
    tb_warm.push_back(b_second);
  }
  return {Median(ta), Median(tb), Median(ta_warm), Median(tb_warm)};
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

void PinLatheThreads() {
  setenv("LATHE_PIN_THREADS", "1", /*overwrite=*/0);
  std::printf("Lathe threads pinned: %s (LATHE_PIN_THREADS=%s)\n",
              std::atoi(std::getenv("LATHE_PIN_THREADS")) > 0 ? "yes" : "no",
              std::getenv("LATHE_PIN_THREADS"));
}

// Set by RunOnFairOpenBlasCore for the program it re-executes: the core
// OpenBLAS had chosen itself.
constexpr char kOpenBlasChoseEnv[] = "LATHE_BENCH_OPENBLAS_CHOSE";

void RunOnFairOpenBlasCore(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's pin
  const std::string detected = openblas_get_corename();
  const std::string fairer =
      FairerOpenBlasCore(detected, HostVectorExtensions());
  if (fairer.empty()) return;
  // OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded.
  setenv("OPENBLAS_CORETYPE", fairer.c_str(), /*overwrite=*/1);
  setenv(kOpenBlasChoseEnv, detected.c_str(), /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr,
               "warning: cannot re-run with OPENBLAS_CORETYPE=%s (%s); "
               "OpenBLAS runs %s\n",
               fairer.c_str(), std::strerror(errno), detected.c_str());
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kOpenBlasChoseEnv);
}

void PrintOpenBlasCore() {
  const char* pinned = std::getenv("OPENBLAS_CORETYPE");
  const char* chose = std::getenv(kOpenBlasChoseEnv);
  if (pinned != nullptr && chose != nullptr) {
    std::printf(
        "OpenBLAS core: %s (OpenBLAS chose %s, a narrower kernel than this CPU "
        "runs; the bench "
        "set OPENBLAS_CORETYPE=%s)\n",
        openblas_get_corename(), chose, pinned);
    return;
  }
  std::printf("OpenBLAS core: %s (OPENBLAS_CORETYPE=%s)\n",
              openblas_get_corename(), pinned ? pinned : "unset");
  if (pinned) {
    std::printf(
        "warning: OPENBLAS_CORETYPE pins OpenBLAS's kernel; run under env -u "
        "OPENBLAS_CORETYPE\n");
  }
}

void SetPeerThreads(int n) {
  openblas_set_num_threads(n);
  omp_set_num_threads(n);
  // OpenMP's threads (oneDNN's) are pinned as Lathe's are (PinLatheThreads:
  // thread t on CPU t, the caller on the first): left free, a woken worker
  // was often queued behind the caller on its CPU, where they took turns
  // spinning at oneDNN's barriers -- and a team created after Lathe had
  // pinned the caller inherited its one CPU. Either way oneDNN's 2-thread
  // conv took 2-8 ms instead of 1.0-1.2. The caller (thread 0) is left as
  // it is.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
#pragma omp parallel num_threads(n)
  {
    const int t = omp_get_thread_num();
    if (t != 0 && cpus > 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(static_cast<int>(t % cpus), &one);
      sched_setaffinity(0, sizeof one, &one);
    }
  }
}

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
           float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b,
              n, 0.0f, c, n);
}

std::string ConvShape::Spec() const {
  return absl::StrCat("conv2d_nchw:N=", n, ",C=", c, ",H=", h, ",W=", w,
                      ",K=", k, ",R=", r, ",S=", s, ",pad=", pad);
}

double ConvShape::Flops() const { return 2.0 * n * k * p() * q() * c * r * s; }

struct OneDnnConv::State {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  dnnl::memory x_mem, w_mem, y_mem;
  dnnl::memory::dims dst_dims;
};

OneDnnConv::OneDnnConv(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
OneDnnConv::~OneDnnConv() = default;

std::unique_ptr<OneDnnConv> OneDnnConv::Create(const ConvShape& shape,
                                               int threads, const float* x,
                                               const float* w) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  SetPeerThreads(threads);
  auto st = std::make_unique<State>();
  dnnl::memory::dims src_dims = {shape.n, shape.c, shape.h, shape.w},
                     wei_dims = {shape.k, shape.c, shape.r, shape.s};
  st->dst_dims = {shape.n, shape.k, shape.p(), shape.q()};
  dnnl::memory::desc src_any(src_dims, dt::f32, tag::any),
      wei_any(wei_dims, dt::f32, tag::any),
      dst_any(st->dst_dims, dt::f32, tag::any);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      src_any, wei_any, dst_any, {1, 1}, {shape.pad, shape.pad},
      {shape.pad, shape.pad});
  st->pd = dnnl::convolution_forward::primitive_desc(desc, st->eng);
  // oneDNN only reads the user's tensors (the reorders' sources).
  dnnl::memory x_user({src_dims, dt::f32, tag::nchw}, st->eng,
                      const_cast<float*>(x));
  dnnl::memory w_user({wei_dims, dt::f32, tag::oihw}, st->eng,
                      const_cast<float*>(w));
  st->x_mem = dnnl::memory(st->pd.src_desc(), st->eng);
  st->w_mem = dnnl::memory(st->pd.weights_desc(), st->eng);
  st->y_mem = dnnl::memory(st->pd.dst_desc(), st->eng);
  dnnl::reorder(x_user, st->x_mem).execute(st->strm, x_user, st->x_mem);
  dnnl::reorder(w_user, st->w_mem).execute(st->strm, w_user, st->w_mem);
  st->conv = dnnl::convolution_forward(st->pd);
  st->strm.wait();
  return std::unique_ptr<OneDnnConv>(new OneDnnConv(std::move(st)));
}

void OneDnnConv::Run() {
  State& st = *state_;
  st.conv.execute(st.strm, {{DNNL_ARG_SRC, st.x_mem},
                            {DNNL_ARG_WEIGHTS, st.w_mem},
                            {DNNL_ARG_DST, st.y_mem}});
  st.strm.wait();
}

void OneDnnConv::CopyOutput(float* y) {
  State& st = *state_;
  dnnl::memory y_user({st.dst_dims, dnnl::memory::data_type::f32,
                       dnnl::memory::format_tag::nchw},
                      st.eng, y);
  dnnl::reorder(st.y_mem, y_user).execute(st.strm, st.y_mem, y_user);
  st.strm.wait();
}

std::string OneDnnConv::Impl() const { return state_->pd.impl_info_str(); }

std::string OneDnnConv::Version() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat(v->major, ".", v->minor, ".", v->patch);
}

}  // namespace lathe::bench

// Writes the hand-written schedules of bench/kernels.cc as trace files
// (bench/traces/*.json). Each schedule is expressed only through Lathe's
// schedule primitives on a TracedSchedule, whose trace is saved; the bench
// replays the files, as a user's `--trace FILE` would.
//
// Usage: bench_make_traces OUT_DIR   (OUT_DIR: bench/traces)
//
// The matmul schedule follows the GotoBLAS/BLIS anatomy of
// docs/kernels.md: an MR x NR register tile of C (cache_write local,
// written back under the tile loop), the N dimension of the tile vectorized
// and the M dimension unrolled, the init out of the K loop
// (decompose_reduction), B packed into [N/NR][K][NR] panels (cache_read with
// a layout, one panel per task), parallel over panels. Packing A as well is
// an option (MatmulTiles::pack_a). ScheduleMatmulBlocked (KC blocking,
// accumulating in C) is kept as an experiment: it is 4x slower today, the
// tile of C is not kept in registers across the KC loop.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

// Unrolls all loops of `block` but the innermost, which is vectorized.
absl::Status UnrollAndVectorize(TracedSchedule* sch, BlockRV block,
                                size_t num_inner) {
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  if (loops.size() < num_inner)
    return absl::InternalError("too few loops to unroll and vectorize");
  for (size_t i = loops.size() - num_inner; i + 1 < loops.size(); ++i) {
    LATHE_RETURN_IF_ERROR(sch->Unroll(loops[i]));
  }
  return sch->Vectorize(loops.back());
}

struct MatmulTiles {
  int64_t mr = 8;   // rows of the register tile (unrolled)
  int64_t nr = 32;  // columns of the register tile (vectorized)
  // A packed as [M/MR][K][MR] at the root: measured no faster at 1024 and
  // ~20% slower at 2048 (the serial, scattered copy of 16 MB), so off.
  bool pack_a = false;
};

// matmul C[M, N] = A[M, K] B[K, N]. Loops, outermost first:
//   jo (N/NR, parallel) > [pack B panel] > io (M/MR) > [init tile]
//   > k (K) > ii (MR, unrolled) > ji (NR, vectorized) > [write back tile]
absl::Status ScheduleMatmul(TracedSchedule* sch, const MatmulTiles& t) {
  LATHE_ASSIGN_OR_RETURN(BlockRV c, sch->GetBlock("C"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(c));
  LoopRV i = loops[0], j = loops[1], k = loops[2];
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> is,
                         sch->Split(i, {Factor(), Factor(t.mr)}));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> js,
                         sch->Split(j, {Factor(), Factor(t.nr)}));
  LoopRV io = is[0], ii = is[1], jo = js[0], ji = js[1];
  LATHE_RETURN_IF_ERROR(sch->Reorder({jo, io, k, ii, ji}));
  // 1. The register tile: accumulate in C_local, written back per tile.
  LATHE_ASSIGN_OR_RETURN(BlockRV wb, sch->CacheWrite(c, 0, "local"));
  LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(wb, io));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, wb, 2));
  // 2. The init of the tile out of the K loop.
  LATHE_ASSIGN_OR_RETURN(BlockRV init, sch->DecomposeReduction(c, k));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, init, 2));
  // 3. Packing: B as [N/NR][K][NR] panels, one per jo iteration; A as
  //    [M/MR][K][MR], once.
  LATHE_ASSIGN_OR_RETURN(
      BlockRV bp, sch->CacheRead(c, 1, "global", Layout{{1, t.nr}, {1, 0, 2}}));
  LATHE_RETURN_IF_ERROR(sch->ComputeAt(bp, jo));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, bp, 1));
  if (t.pack_a) {
    LATHE_ASSIGN_OR_RETURN(
        BlockRV ap,
        sch->CacheRead(c, 0, "global", Layout{{t.mr, 1}, {0, 2, 1}}));
    (void)ap;
  }
  // 4. The micro-kernel: rows unrolled, columns vectorized; panels in parallel.
  LATHE_RETURN_IF_ERROR(sch->Unroll(ii));
  LATHE_RETURN_IF_ERROR(sch->Vectorize(ji));
  LATHE_RETURN_IF_ERROR(sch->Parallel(jo));
  return absl::OkStatus();
}

struct ConvTiles {
  int64_t qr = 7;   // output pixels of a row in the register tile (unrolled)
  int64_t kr = 32;  // output channels in the register tile (vectorized)
  bool unroll_s =
      false;  // unrolled, LLVM shares broadcasts across s and spills
};

// conv2d_nchw Y[n, k, p, q] = sum_{c, r, s} pad[n, c, p + r, q + s] W[k, c, r,
// s]: the direct-convolution micro-kernel of docs/kernels.md. A tile of QR
// output pixels x KR output channels accumulates in registers, vectorized over
// the channels: the accumulator is laid out [.., q, k] (cache_write with a
// layout) and W is packed as [K/KR][C][R][S][KR], so every vector access is
// unit-stride; the input is broadcast. Loops, outermost first:
//   n > p (parallel) > ko > qo > [init] > c > r > s > qi (unrolled)
//   > ki (vectorized) > [write back, transposed to NCHW, unrolled]
absl::Status ScheduleConv(TracedSchedule* sch, const ConvTiles& t) {
  LATHE_ASSIGN_OR_RETURN(BlockRV y, sch->GetBlock("Y"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(y));
  LoopRV n = loops[0], k = loops[1], p = loops[2], q = loops[3], c = loops[4],
         r = loops[5], s = loops[6];
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> ks,
                         sch->Split(k, {Factor(), Factor(t.kr)}));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> qs,
                         sch->Split(q, {Factor(), Factor(t.qr)}));
  LoopRV ko = ks[0], ki = ks[1], qo = qs[0], qi = qs[1];
  LATHE_RETURN_IF_ERROR(sch->Reorder({n, p, ko, qo, c, r, s, qi, ki}));
  // 1. The register tile, channels innermost: Y[n, k, p, q] -> [n, p, q, k].
  LATHE_ASSIGN_OR_RETURN(
      BlockRV wb,
      sch->CacheWrite(y, 0, "local", Layout{{1, 1, 1, 1}, {0, 2, 3, 1}}));
  LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(wb, qo));
  {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> wl, sch->GetLoops(wb));
    // Under n, p, ko, qo: the tile's loops, all unrolled so that the
    // accumulator is addressed at constants and stays in registers.
    for (size_t i = 4; i < wl.size(); ++i)
      LATHE_RETURN_IF_ERROR(sch->Unroll(wl[i]));
  }
  LATHE_ASSIGN_OR_RETURN(BlockRV init, sch->DecomposeReduction(y, c));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, init, 2));
  // 2. Weights packed [K/KR][C][R][S][KR], once per call, in the panels'
  //    order (kernel channels innermost, vectorized; panels in parallel) so
  //    that the copy's stores are consecutive.
  LATHE_ASSIGN_OR_RETURN(
      BlockRV wp,
      sch->CacheRead(y, 1, "global", Layout{{t.kr, 1, 1, 1}, {0, 2, 3, 4, 1}}));
  {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> wl, sch->GetLoops(wp));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> wk,
                           sch->Split(wl[0], {Factor(), Factor(t.kr)}));
    LATHE_RETURN_IF_ERROR(sch->Reorder({wl[1], wl[2], wl[3], wk[1]}));
    LATHE_RETURN_IF_ERROR(sch->Vectorize(wk[1]));
    LATHE_RETURN_IF_ERROR(sch->Parallel(wk[0]));
  }
  // 3. The micro-kernel and the parallel outer loop.
  if (t.unroll_s) LATHE_RETURN_IF_ERROR(sch->Unroll(s));
  LATHE_RETURN_IF_ERROR(sch->Unroll(qi));
  LATHE_RETURN_IF_ERROR(sch->Vectorize(ki));
  LATHE_RETURN_IF_ERROR(sch->Parallel(p));
  // 4. The padded copy of the input, in parallel over channels.
  LATHE_ASSIGN_OR_RETURN(BlockRV pad, sch->GetBlock("pad"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> pl, sch->GetLoops(pad));
  LATHE_RETURN_IF_ERROR(sch->Parallel(pl[1]));
  return absl::OkStatus();
}

// Experiment: GotoBLAS cache blocking. K split by KC outside the tiles, so
// the tile accumulates into C itself (LICM keeps it in registers across the
// KC loop): ko > io0 (M/MC, parallel) > jo > io1 > ki > ii > ji.
absl::Status ScheduleMatmulBlocked(TracedSchedule* sch, int64_t mr, int64_t nr,
                                   int64_t mc, int64_t kc) {
  LATHE_ASSIGN_OR_RETURN(BlockRV c, sch->GetBlock("C"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(c));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> is,
      sch->Split(loops[0], {Factor(), Factor(mc / mr), Factor(mr)}));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> js,
                         sch->Split(loops[1], {Factor(), Factor(nr)}));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> ks,
                         sch->Split(loops[2], {Factor(), Factor(kc)}));
  LATHE_RETURN_IF_ERROR(
      sch->Reorder({ks[0], is[0], js[0], is[1], ks[1], is[2], js[1]}));
  LATHE_ASSIGN_OR_RETURN(BlockRV init, sch->DecomposeReduction(c, ks[0]));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, init, 1));
  LATHE_ASSIGN_OR_RETURN(
      BlockRV bp, sch->CacheRead(c, 1, "global", Layout{{1, nr}, {1, 0, 2}}));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, bp, 1));
  LATHE_ASSIGN_OR_RETURN(
      BlockRV ap, sch->CacheRead(c, 0, "global", Layout{{mr, 1}, {0, 2, 1}}));
  (void)ap;
  LATHE_RETURN_IF_ERROR(sch->Unroll(is[2]));
  LATHE_RETURN_IF_ERROR(sch->Vectorize(js[1]));
  LATHE_RETURN_IF_ERROR(sch->Parallel(is[0]));
  return absl::OkStatus();
}

absl::Status WriteTrace(
    const std::string& spec, const std::string& path,
    const std::function<absl::Status(TracedSchedule*)>& schedule) {
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program p, w.InitialProgram());
  TracedSchedule sch(std::move(p));
  sch.mutable_trace().workload = w.CanonicalForm();
  absl::Status st = schedule(&sch);
  if (!st.ok())
    return absl::Status(st.code(), absl::StrCat(spec, ": ", st.message()));
  LATHE_RETURN_IF_ERROR(sch.trace().Save(path));
  std::printf("%s: %s\n%s\n", path.c_str(), w.CanonicalForm().c_str(),
              sch.trace().ToText().c_str());
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  struct Job {
    std::string spec, file;
    std::function<absl::Status(TracedSchedule*)> schedule;
  };
  std::vector<Job> jobs = {
      {"matmul:M=1024,N=1024,K=1024", "matmul_1024.json",
       [](TracedSchedule* s) { return ScheduleMatmul(s, MatmulTiles{}); }},
      {"matmul:M=2048,N=2048,K=2048", "matmul_2048.json",
       [](TracedSchedule* s) { return ScheduleMatmul(s, MatmulTiles{}); }},
      {"conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
       "conv2d_128x28.json",
       [](TracedSchedule* s) { return ScheduleConv(s, ConvTiles{}); }},
  };
  // Variants for experiments (bench_kernels --conv-trace FILE), not in git.
  if (std::getenv("LATHE_MATMUL_VARIANTS")) {
    for (int64_t n : {1024, 2048}) {
      std::string spec = absl::StrCat("matmul:M=", n, ",N=", n, ",K=", n);
      for (int64_t kc : {128, 256, 512}) {
        jobs.push_back({spec, absl::StrCat("mm", n, "_blocked_kc", kc, ".json"),
                        [=](TracedSchedule* s) {
                          return ScheduleMatmulBlocked(s, 8, 32, 128, kc);
                        }});
      }
      jobs.push_back(
          {spec, absl::StrCat("mm", n, "_4x64.json"), [=](TracedSchedule* s) {
             return ScheduleMatmul(s, MatmulTiles{4, 64, true});
           }});
      jobs.push_back({spec, absl::StrCat("mm", n, "_8x32_nopacka.json"),
                      [=](TracedSchedule* s) {
                        return ScheduleMatmul(s, MatmulTiles{8, 32, false});
                      }});
    }
  }
  if (std::getenv("LATHE_CONV_VARIANTS")) {
    for (int64_t qr : {7, 14, 28}) {
      for (int64_t kr : {16, 32, 64}) {
        for (bool us : {false, true}) {
          jobs.push_back(
              {"conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
               absl::StrCat("conv_q", qr, "_k", kr, us ? "_us" : "", ".json"),
               [=](TracedSchedule* s) {
                 return ScheduleConv(s, ConvTiles{qr, kr, us});
               }});
        }
      }
    }
  }
  for (const Job& job : jobs) {
    absl::Status st = WriteTrace(job.spec, dir + "/" + job.file, job.schedule);
    if (!st.ok()) {
      std::fprintf(stderr, "bench_make_traces: %s\n",
                   std::string(st.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }

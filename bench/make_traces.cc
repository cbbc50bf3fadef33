// Writes the hand-written schedules of bench/kernels.cc as trace files
// (bench/traces/*.json). Each schedule is expressed only through Lathe's
// schedule primitives on a TracedSchedule, whose trace is saved; the bench
// replays the files, as a user's `--trace FILE` would.
//
// Usage: bench_make_traces OUT_DIR   (OUT_DIR: bench/traces)
//
// The matmul schedule follows the GotoBLAS/BLIS anatomy of
// /work/shared/KERNELS.md: an MR x NR register tile of C (cache_write local,
// written back under the tile loop), the N dimension of the tile vectorized
// and the M dimension unrolled, the init out of the K loop
// (decompose_reduction), B packed into [N/NR][K][NR] panels and A into
// [M/MR][K][MR] panels (cache_read with a layout), parallel over panels.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/util/check.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

// Unrolls all loops of `block` but the innermost, which is vectorized.
absl::Status UnrollAndVectorize(TracedSchedule* sch, BlockRV block, size_t num_inner) {
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  if (loops.size() < num_inner) return absl::InternalError("too few loops to unroll and vectorize");
  for (size_t i = loops.size() - num_inner; i + 1 < loops.size(); ++i) {
    LATHE_RETURN_IF_ERROR(sch->Unroll(loops[i]));
  }
  return sch->Vectorize(loops.back());
}

struct MatmulTiles {
  int64_t mr = 8;   // rows of the register tile (unrolled)
  int64_t nr = 32;  // columns of the register tile (vectorized)
  bool pack_a = true;
};

// matmul C[M, N] = A[M, K] B[K, N]. Loops, outermost first:
//   jo (N/NR, parallel) > [pack B panel] > io (M/MR) > [init tile]
//   > k (K) > ii (MR, unrolled) > ji (NR, vectorized) > [write back tile]
absl::Status ScheduleMatmul(TracedSchedule* sch, const MatmulTiles& t) {
  LATHE_ASSIGN_OR_RETURN(BlockRV c, sch->GetBlock("C"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(c));
  LoopRV i = loops[0], j = loops[1], k = loops[2];
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> is, sch->Split(i, {Factor(), Factor(t.mr)}));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> js, sch->Split(j, {Factor(), Factor(t.nr)}));
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
  LATHE_ASSIGN_OR_RETURN(BlockRV bp, sch->CacheRead(c, 1, "global", Layout{{1, t.nr}, {1, 0, 2}}));
  LATHE_RETURN_IF_ERROR(sch->ComputeAt(bp, jo));
  LATHE_RETURN_IF_ERROR(UnrollAndVectorize(sch, bp, 1));
  if (t.pack_a) {
    LATHE_ASSIGN_OR_RETURN(BlockRV ap, sch->CacheRead(c, 0, "global", Layout{{t.mr, 1}, {0, 2, 1}}));
    (void)ap;
  }
  // 4. The micro-kernel: rows unrolled, columns vectorized; panels in parallel.
  LATHE_RETURN_IF_ERROR(sch->Unroll(ii));
  LATHE_RETURN_IF_ERROR(sch->Vectorize(ji));
  LATHE_RETURN_IF_ERROR(sch->Parallel(jo));
  return absl::OkStatus();
}

absl::Status WriteTrace(const std::string& spec, const std::string& path,
                        const std::function<absl::Status(TracedSchedule*)>& schedule) {
  LATHE_ASSIGN_OR_RETURN(Workload w, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program p, w.InitialProgram());
  TracedSchedule sch(std::move(p));
  sch.mutable_trace().workload = w.CanonicalForm();
  absl::Status st = schedule(&sch);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(spec, ": ", st.message()));
  LATHE_RETURN_IF_ERROR(sch.trace().Save(path));
  std::printf("%s: %s\n%s\n", path.c_str(), w.CanonicalForm().c_str(), sch.trace().ToText().c_str());
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
  };
  for (const Job& job : jobs) {
    absl::Status st = WriteTrace(job.spec, dir + "/" + job.file, job.schedule);
    if (!st.ok()) {
      std::fprintf(stderr, "bench_make_traces: %s\n", std::string(st.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }

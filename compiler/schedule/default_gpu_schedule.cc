// The default GPU schedule (strategy in default_gpu_schedule.h).
#include "compiler/schedule/default_gpu_schedule.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/reused_stage.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "compiler/schedule/gpu_tile_choice.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/traced_schedule.h"

namespace lathe {
namespace {

// A reduction with at most this many outputs leaves GPUs idle with one
// thread per output: its threads share each reduction instead.
constexpr int64_t kMaxCrossThreadOutputs = 8192;

// The shared-memory tile's threads along each of its two axes.
constexpr int64_t kSharedTileThreadsPerAxis = 16;

// Whether each loop above the block is bound to exactly one of its
// iteration variables, one loop per variable (an initial program's stage).
bool OwnsItsLoops(const Program& program, const BlockNode& block) {
  std::vector<ForNode*> loops = program.LoopsAbove(&block);
  if (loops.empty() || loops.size() != block.iter_vars.size()) return false;
  for (const ForNode* loop : loops) {
    int bound = 0;
    for (const Expr& value : block.iter_values)
      bound += value.same_as(loop->var);
    if (bound != 1) return false;
  }
  return true;
}

IterType TypeOfLoop(const BlockNode& block, const ForNode& loop) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_values[i].same_as(loop.var)) return block.iter_vars[i].type;
  }
  return IterType::kSpatial;
}

// The thread counts a sampled binding of a loop of `extent` draws from:
// the powers of two in [32, max_threads] smaller than the extent (TVM's
// AutoBind draws from the same; with `dividing`, only those that divide
// it), and the extent itself when it is at most max_threads (one block).
// A local accumulation needs `dividing`: its write-back cannot be computed
// under a thread loop whose tail is predicated (reverse_compute_at), so a
// count with a tail would fail that draw.
std::vector<int64_t> BindingThreadCandidates(int64_t extent,
                                             int64_t max_threads,
                                             bool dividing) {
  std::vector<int64_t> candidates;
  for (int64_t t = 32; t <= max_threads && t < extent; t *= 2) {
    if (!dividing || extent % t == 0) candidates.push_back(t);
  }
  if (extent <= max_threads) candidates.push_back(extent);
  return candidates;
}

// The thread counts a sampled cross-thread reduction over `extent` draws
// from: its divisors in [32, max_threads] that are multiples of 32, else
// all its divisors in that range.
std::vector<int64_t> ReductionThreadCandidates(int64_t extent,
                                               int64_t max_threads) {
  std::vector<int64_t> warps, any;
  for (int64_t t = 32; t <= std::min(extent, max_threads); ++t) {
    if (extent % t != 0) continue;
    (t % 32 == 0 ? warps : any).push_back(t);
  }
  return warps.empty() ? any : warps;
}

// One of `candidates`: sampled uniformly when `sampling` and there are two
// or more, else `fixed`.
absl::StatusOr<Factor> ThreadFactor(ConcreteSchedule* sch,
                                    const GpuBlockSampling* sampling,
                                    const std::vector<int64_t>& candidates,
                                    int64_t fixed) {
  if (sampling == nullptr || candidates.size() < 2) return Factor{fixed};
  LATHE_ASSIGN_OR_RETURN(
      ExprRV t, sch->SampleCategorical(
                    candidates, std::vector<double>(candidates.size(), 1.0)));
  return Factor{t};
}

// The unroll depth of block `name`'s serial reduction, sampled: its
// innermost reduction loop of two or more iterations split by a sampled
// perfect tile whose inner factor is at most kMaxSampledUnroll, the inner
// part unrolled (1: no unrolling). A split, as the CPU space's
// ParallelVectorizeUnroll makes it, because an annotation's value is a
// constant of the trace, not a sampled variable. Nothing when the block has
// no such loop.
constexpr int64_t kMaxSampledUnroll = 16;
absl::Status SampleUnrollDepth(ConcreteSchedule* sch, const std::string& name) {
  LATHE_ASSIGN_OR_RETURN(BlockRV block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  const BlockNode* node = sch->program().FindBlock(name);
  std::optional<LoopRV> innermost;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
    const ForNode* loop = sch->program().FindLoop(loop_name);
    if (TypeOfLoop(*node, *loop) == IterType::kReduce && loop->extent >= 2)
      innermost = l;
  }
  if (!innermost.has_value()) return absl::OkStatus();
  LATHE_ASSIGN_OR_RETURN(
      std::vector<ExprRV> tile,
      sch->SamplePerfectTile(*innermost, 2, kMaxSampledUnroll));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> parts,
      sch->Split(*innermost, {Factor{tile[0]}, Factor{tile[1]}}));
  return sch->Unroll(parts[1]);
}

// Steps 2a-2d on `sch` for block `name`; `accumulate` chooses whether 2b and
// 2d run. Fails at the first refused primitive.
absl::Status ScheduleBlock(ConcreteSchedule* sch, const std::string& name,
                           int64_t threads, bool accumulate,
                           const GpuBlockSampling* sampling) {
  LATHE_ASSIGN_OR_RETURN(BlockRV block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  const BlockNode* node = sch->program().FindBlock(name);
  std::vector<LoopRV> spatial, reduce;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
    const ForNode* loop = sch->program().FindLoop(loop_name);
    (TypeOfLoop(*node, *loop) == IterType::kSpatial ? spatial : reduce)
        .push_back(l);
  }
  if (spatial.empty()) {
    return absl::FailedPreconditionError("no spatial loop to bind");
  }
  // a.
  if (!reduce.empty()) {
    std::vector<LoopRV> order = spatial;
    order.insert(order.end(), reduce.begin(), reduce.end());
    LATHE_RETURN_IF_ERROR(sch->Reorder(order));
  }
  // b.
  std::optional<BlockRV> write_back;
  if (accumulate) {
    LATHE_ASSIGN_OR_RETURN(write_back, CacheOutputLocally(sch, block));
  }
  // c.
  LoopRV fused = spatial.front();
  if (spatial.size() > 1) {
    LATHE_ASSIGN_OR_RETURN(fused, sch->Fuse(spatial));
  }
  LATHE_ASSIGN_OR_RETURN(std::string fused_name, sch->LoopName(fused));
  const int64_t extent = sch->program().FindLoop(fused_name)->extent;
  LoopRV thread_loop = fused;
  const std::vector<int64_t> candidates =
      sampling != nullptr
          ? BindingThreadCandidates(extent, sampling->max_threads,
                                    /*dividing=*/accumulate)
          : std::vector<int64_t>{};
  if (candidates.size() >= 2 || extent > threads) {
    LATHE_ASSIGN_OR_RETURN(Factor by,
                           ThreadFactor(sch, sampling, candidates, threads));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts,
                           sch->Split(fused, {Factor{}, by}));
    LATHE_RETURN_IF_ERROR(sch->Bind(parts[0], "blockIdx.x"));
    thread_loop = parts[1];
  }
  LATHE_RETURN_IF_ERROR(sch->Bind(thread_loop, "threadIdx.x"));
  // d.
  if (accumulate) {
    LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(*write_back, thread_loop));
    LATHE_RETURN_IF_ERROR(
        sch->DecomposeReduction(block, reduce.front()).status());
  }
  // e. Sampled: the unroll depth of each thread's serial reduction.
  if (sampling != nullptr && accumulate) {
    LATHE_RETURN_IF_ERROR(SampleUnrollDepth(sch, name));
  }
  return absl::OkStatus();
}

// Threads and register tile along one loop of `extent`: the most threads
// of {16, 8, 4, 2} that divide it (at most `max_threads`), then the largest
// register tile of {4, 2} that divides what is left; 1 when none does.
struct AxisTile {
  int64_t threads = 1;
  int64_t registers = 1;
};
AxisTile ChooseAxisTile(int64_t extent, int64_t max_threads) {
  AxisTile tile;
  for (int64_t t : {16, 8, 4, 2}) {
    if (t <= max_threads && extent % t == 0) {
      tile.threads = t;
      break;
    }
  }
  for (int64_t r : {4, 2}) {
    if ((extent / tile.threads) % r == 0) {
      tile.registers = r;
      break;
    }
  }
  return tile;
}

// Step 2 for a reduction whose last two spatial loops tile well (see the
// header): a register tile per thread. Fails at the first refused
// primitive, or when the tile would have fewer than 64 threads or fewer
// than 4 accumulators.
absl::Status ScheduleRegisterTile(ConcreteSchedule* sch,
                                  const std::string& name,
                                  const DefaultGpuScheduleOptions& options,
                                  const GpuBlockSampling*) {
  const int64_t threads = options.threads_per_block;
  LATHE_ASSIGN_OR_RETURN(BlockRV block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  const BlockNode* node = sch->program().FindBlock(name);
  std::vector<LoopRV> spatial, reduce;
  std::vector<int64_t> spatial_extents;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
    const ForNode* loop = sch->program().FindLoop(loop_name);
    if (TypeOfLoop(*node, *loop) == IterType::kSpatial) {
      spatial.push_back(l);
      spatial_extents.push_back(loop->extent);
    } else {
      reduce.push_back(l);
    }
  }
  const size_t n = spatial.size();
  if (n < 2 || reduce.empty()) {
    return absl::FailedPreconditionError(
        "a register tile needs two spatial loops and a reduction");
  }
  const AxisTile ti = ChooseAxisTile(spatial_extents[n - 2], threads);
  const AxisTile tj =
      ChooseAxisTile(spatial_extents[n - 1], threads / ti.threads);
  if (ti.threads * tj.threads < 64 || ti.registers * tj.registers < 4) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a register tile of ", ti.threads, "x", tj.threads, " threads and ",
        ti.registers, "x", tj.registers, " accumulators is too small"));
  }
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> i,
      sch->Split(spatial[n - 2],
                 {Factor{}, Factor{ti.threads}, Factor{ti.registers}}));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> j,
      sch->Split(spatial[n - 1],
                 {Factor{}, Factor{tj.threads}, Factor{tj.registers}}));
  std::vector<LoopRV> outer(spatial.begin(), spatial.end() - 2);
  outer.push_back(i[0]);
  outer.push_back(j[0]);
  std::vector<LoopRV> order = outer;
  order.push_back(i[1]);
  order.push_back(j[1]);
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.push_back(i[2]);
  order.push_back(j[2]);
  LATHE_RETURN_IF_ERROR(sch->Reorder(order));
  LATHE_ASSIGN_OR_RETURN(BlockRV write_back, CacheOutputLocally(sch, block));
  LATHE_ASSIGN_OR_RETURN(LoopRV block_loop, sch->Fuse(outer));
  LATHE_ASSIGN_OR_RETURN(LoopRV thread_loop, sch->Fuse({i[1], j[1]}));
  LATHE_RETURN_IF_ERROR(sch->Bind(block_loop, "blockIdx.x"));
  LATHE_RETURN_IF_ERROR(sch->Bind(thread_loop, "threadIdx.x"));
  LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(write_back, thread_loop));
  LATHE_ASSIGN_OR_RETURN(BlockRV init,
                         sch->DecomposeReduction(block, reduce.front()));
  // The accumulators stay in registers only when every loop that indexes
  // them is unrolled: the tile's, the init's and the write-back's.
  LATHE_RETURN_IF_ERROR(sch->Unroll(i[2]));
  LATHE_RETURN_IF_ERROR(sch->Unroll(j[2]));
  LATHE_ASSIGN_OR_RETURN(std::string thread_name, sch->LoopName(thread_loop));
  for (BlockRV b : {init, write_back}) {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> nest, sch->GetLoops(b));
    bool below = false;
    for (LoopRV l : nest) {
      if (below) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
      below |= sch->LoopName(l).value() == thread_name;
    }
  }
  return absl::OkStatus();
}

// The shared-memory tile (see the header): per axis, the largest register
// tile of {8, 4, 2}, at most `max_registers`, such that 16 threads times it
// divide the extent.
int64_t ChooseSharedTileRegisters(int64_t extent, int64_t max_registers) {
  for (int64_t r : {8, 4, 2}) {
    if (r <= max_registers && extent % (kSharedTileThreadsPerAxis * r) == 0)
      return r;
  }
  return 0;
}

// The K chunk: `requested` when it is set and divides the reduction, else
// the largest of {16, 8, 4} that divides it.
int64_t ChooseKChunk(int64_t reduction, int64_t requested) {
  if (requested > 0 && reduction % requested == 0) return requested;
  for (int64_t c : {16, 8, 4}) {
    if (reduction % c == 0) return c;
  }
  return 0;
}

// Step 2 for a reduction whose last two spatial loops tile by 16 threads
// and a register tile each (see the header): the shared-memory tile with
// fixed factors. Fails at the first refused primitive, or when the tile
// does not fit.
absl::Status ScheduleSharedTile(ConcreteSchedule* sch, const std::string& name,
                                const DefaultGpuScheduleOptions& options,
                                const GpuBlockSampling*) {
  constexpr int64_t kAxis = kSharedTileThreadsPerAxis;
  if (options.threads_per_block < kAxis * kAxis) {
    return absl::FailedPreconditionError(
        absl::StrCat("a shared-memory tile needs ", kAxis * kAxis, " threads"));
  }
  return ApplySharedTile(
      sch, name, /*fuse_reductions=*/true,
      [&](ConcreteSchedule*,
          const SharedTileLoops& loops) -> absl::StatusOr<SharedTileFactors> {
        const size_t n = loops.spatial.size();
        const int64_t ri = ChooseSharedTileRegisters(
            loops.spatial_extents[n - 2], options.shared_tile_max_registers);
        const int64_t rj = ChooseSharedTileRegisters(
            loops.spatial_extents[n - 1], options.shared_tile_max_registers);
        const int64_t chunk =
            ChooseKChunk(loops.reduce_extents[0], options.shared_tile_k_chunk);
        if (ri == 0 || rj == 0 || ri * rj < 16 || chunk == 0) {
          return absl::FailedPreconditionError(absl::StrCat(
              "a shared-memory tile needs spatial extents ",
              loops.spatial_extents[n - 2], " and ",
              loops.spatial_extents[n - 1], " divisible by ", kAxis,
              " threads times 8, 4 or 2 registers (16 accumulators at least) "
              "and a reduction of ",
              loops.reduce_extents[0], " divisible by 16, 8 or 4"));
        }
        // Runs of 4 (float4 reads) when the register tile is 8.
        auto groups = [&](int64_t registers) -> int64_t {
          return registers >= 8 ? options.shared_tile_register_groups : 1;
        };
        SharedTileFactors f;
        f.axes.resize(n);
        f.axes[n - 2] = SharedTileAxis{kAxis, ri / groups(ri), groups(ri)};
        f.axes[n - 1] = SharedTileAxis{kAxis, rj / groups(rj), groups(rj)};
        f.k_chunk = chunk;
        f.lanes = int64_t{4};
        return f;
      },
      options.max_shared_elements);
}

// The tiles of RankSharedTiles a block tries, best first, before it gives
// up on a shared-memory tile at its extents. Not every ranked tile is
// built: the data-parallel proof of a copy split by threads that do not
// divide its tile can fail (on an index the simplifier rewrote into a form
// the proof does not read), and such a tile is passed over.
constexpr size_t kRankedTilesTried = 16;

// Step 2 for a reduction the fixed shared tile does not divide (see the
// header): the best-ranked shared-memory tile of gpu_tile_choice.h that
// ApplySharedTile builds, its reduction loops kept apart (a convolution's
// unrolled chunk indexes its input without divisions). Fails when no
// ranked tile is built.
absl::Status ScheduleRankedSharedTile(ConcreteSchedule* sch,
                                      const std::string& name,
                                      const DefaultGpuScheduleOptions& options,
                                      const GpuBlockSampling* sampling) {
  const BlockNode* node = sch->program().FindBlock(name);
  if (node == nullptr) return absl::NotFoundError(name);
  std::optional<TileProblem> problem = TileProblemOf(
      sch->program(), *node,
      sampling != nullptr ? sampling->max_threads : options.threads_per_block);
  if (!problem.has_value()) {
    return absl::FailedPreconditionError("its loops are not its own");
  }
  problem->max_shared_elements = options.max_shared_elements;
  if (options.ranked_tile < 0) {
    return absl::FailedPreconditionError("ranked tiles are left out");
  }
  std::vector<TileChoice> ranked = RankSharedTiles(
      *problem, kRankedTilesTried + static_cast<size_t>(options.ranked_tile));
  ranked.erase(
      ranked.begin(),
      ranked.begin() +
          std::min(ranked.size(), static_cast<size_t>(options.ranked_tile)));
  if (ranked.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no shared-memory tile of whole warps, ", kMinTileRegisters,
        " accumulators a thread or more and an intensity of ",
        kMinTileIntensity, " divides the loops"));
  }
  auto fixed = [&](const TileChoice& tile) -> ChooseSharedTile {
    return [&options, tile](ConcreteSchedule*, const SharedTileLoops& loops)
               -> absl::StatusOr<SharedTileFactors> {
      SharedTileFactors f;
      f.axes.resize(loops.spatial.size());
      for (size_t d = 0; d < f.axes.size() && d < tile.threads.size(); ++d) {
        const int64_t t = tile.threads[d], r = tile.registers[d];
        if (t * r == 1) continue;
        // Runs of 4 (float4 reads) when the register tile is 8.
        const int64_t groups =
            r >= 8 ? options.shared_tile_register_groups : int64_t{1};
        f.axes[d] = SharedTileAxis{t, r / groups, groups};
      }
      f.k_chunk = tile.k_chunk;
      f.lanes = int64_t{4};
      return f;
    };
  };
  absl::Status last;
  for (const TileChoice& tile : ranked) {
    ConcreteSchedule scratch(sch->program());
    last = ApplySharedTile(&scratch, name, /*fuse_reductions=*/false,
                           fixed(tile), options.max_shared_elements);
    if (last.ok()) {
      return ApplySharedTile(sch, name, /*fuse_reductions=*/false, fixed(tile),
                             options.max_shared_elements);
    }
  }
  return last;
}

// The threads of a cross-thread reduction over `extent`: its largest
// divisor in [32, max_threads] that is a multiple of 32, else its largest
// divisor in that range; 0 when there is none.
int64_t ChooseReductionThreads(int64_t extent, int64_t max_threads) {
  int64_t any = 0;
  for (int64_t t = std::min(extent, max_threads); t >= 32; --t) {
    if (extent % t != 0) continue;
    if (t % 32 == 0) return t;
    if (any == 0) any = t;
  }
  return any;
}

// Step 2 for a reduction with few outputs and a long reduction (see the
// header): the threads of a block share one output's reduction.
absl::Status ScheduleCrossThread(ConcreteSchedule* sch, const std::string& name,
                                 const DefaultGpuScheduleOptions& options,
                                 const GpuBlockSampling* sampling) {
  const int64_t threads =
      sampling != nullptr ? sampling->max_threads : options.threads_per_block;
  LATHE_ASSIGN_OR_RETURN(BlockRV block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  const BlockNode* node = sch->program().FindBlock(name);
  std::vector<LoopRV> spatial, reduce;
  int64_t outputs = 1, reduction = 1;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
    const ForNode* loop = sch->program().FindLoop(loop_name);
    if (TypeOfLoop(*node, *loop) == IterType::kSpatial) {
      spatial.push_back(l);
      outputs *= loop->extent;
    } else {
      reduce.push_back(l);
      reduction *= loop->extent;
    }
  }
  const int64_t reduction_threads = ChooseReductionThreads(reduction, threads);
  if (spatial.empty() || reduce.size() != 1 || reduction < 64 ||
      outputs > kMaxCrossThreadOutputs || reduction_threads == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a cross-thread reduction needs at most ", kMaxCrossThreadOutputs,
        " outputs and one reduction loop of 64 or more iterations with a "
        "divisor in [32, ",
        threads, "]"));
  }
  std::vector<LoopRV> order = spatial;
  order.push_back(reduce.front());
  LATHE_RETURN_IF_ERROR(sch->Reorder(order));
  LATHE_ASSIGN_OR_RETURN(
      Factor by,
      ThreadFactor(sch, sampling, ReductionThreadCandidates(reduction, threads),
                   reduction_threads));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> k,
                         sch->Split(reduce.front(), {Factor{}, by}));
  LATHE_ASSIGN_OR_RETURN(
      BlockRV partial,
      sch->RFactor(k[1], static_cast<int64_t>(spatial.size())));
  LATHE_ASSIGN_OR_RETURN(BlockRV final_block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> final_loops,
                         sch->GetLoops(final_block));
  std::vector<LoopRV> final_spatial(final_loops.begin(),
                                    final_loops.begin() + spatial.size());
  LoopRV block_loop = final_spatial.front();
  if (final_spatial.size() > 1) {
    LATHE_ASSIGN_OR_RETURN(block_loop, sch->Fuse(final_spatial));
  }
  // Sampled: unit loops stay (a draw of all the reduction as threads leaves
  // its serial part one iteration), so that every draw has the same loops.
  LATHE_RETURN_IF_ERROR(
      sch->ComputeAt(partial, block_loop,
                     /*preserve_unit_loops=*/sampling != nullptr));
  LATHE_RETURN_IF_ERROR(sch->Bind(block_loop, "blockIdx.x"));
  LATHE_ASSIGN_OR_RETURN(std::string partial_name, sch->BlockName(partial));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> partial_loops,
                         sch->GetLoops(partial));
  const BlockNode* partial_node = sch->program().FindBlock(partial_name);
  // The threads: the loop of the partials' new dimension (rfactor's
  // factor_axis), below the block loop and any unit loops kept above it.
  const size_t factor_axis = spatial.size();
  std::optional<LoopRV> thread_loop;
  for (size_t i = 1; i < partial_loops.size() && !thread_loop &&
                     factor_axis < partial_node->iter_values.size();
       ++i) {
    const ForNode* loop =
        sch->program().FindLoop(sch->LoopName(partial_loops[i]).value());
    if (partial_node->iter_values[factor_axis].same_as(loop->var))
      thread_loop = partial_loops[i];
  }
  if (!thread_loop.has_value()) {
    return absl::FailedPreconditionError(
        "no loop of the partials' threads in the cross-thread reduction");
  }
  LATHE_RETURN_IF_ERROR(sch->Bind(*thread_loop, "threadIdx.x"));
  // Each thread reduces the partials into a register; thread 0 stores it.
  LATHE_ASSIGN_OR_RETURN(BlockRV write_back,
                         sch->CacheWrite(final_block, 0, "local"));
  return sch->ReverseComputeAt(write_back, block_loop);
}

// The strategies of step 2 for a reduction, in the order they are tried.
using Strategy = absl::Status (*)(ConcreteSchedule*, const std::string&,
                                  const DefaultGpuScheduleOptions&,
                                  const GpuBlockSampling*);
constexpr std::pair<Strategy, const char*> kReductionStrategies[] = {
    {&ScheduleCrossThread, "cross-thread reduction"},
    {&ScheduleSharedTile, "shared-memory tile"},
    {&ScheduleRegisterTile, "register tile"},
    {&ScheduleRankedSharedTile, "ranked shared-memory tile"}};

// Whether step 2 would give reduction `name` of `program` a shared-memory
// tile (fixed or ranked): every strategy before it refused on a scratch
// copy, and it built.
bool TakesSharedTile(const Program& program, const std::string& name,
                     const DefaultGpuScheduleOptions& options) {
  const BlockNode* node = program.FindBlock(name);
  if (node == nullptr || !node->IsReduction() || !OwnsItsLoops(program, *node))
    return false;
  for (const auto& [strategy, what] : kReductionStrategies) {
    ConcreteSchedule scratch(program);
    if (strategy(&scratch, name, options, nullptr).ok()) {
      return strategy == &ScheduleSharedTile ||
             strategy == &ScheduleRankedSharedTile;
    }
  }
  return false;
}

// Whether step 1 keeps stage `name` (not inlined into its reader): its only
// reader is a reduction that will get a shared-memory tile, and it calls
// no math function, so that the tile folds it into its copy
// (gpu_shared_tile.h: a convolution's padding tested once per element of
// the tile, rather than in every product).
bool KeptForSharedTile(const Program& program, const std::string& name,
                       const DefaultGpuScheduleOptions& options) {
  const BlockNode* stage = program.FindBlock(name);
  const auto* store =
      stage != nullptr && stage->body ? stage->body->as<StoreNode>() : nullptr;
  if (store == nullptr || HasMathCall(store->value)) return false;
  ConcreteSchedule probe(program);
  absl::StatusOr<BlockRV> block = probe.GetBlock(name);
  if (!block.ok()) return false;
  absl::StatusOr<std::vector<BlockRV>> readers = probe.GetConsumers(*block);
  if (!readers.ok() || readers->size() != 1) return false;
  absl::StatusOr<std::string> reader = probe.BlockName(readers->front());
  return reader.ok() && TakesSharedTile(program, *reader, options);
}

}  // namespace

bool ScheduleGpuBlock(ConcreteSchedule* sch, const std::string& name,
                      const DefaultGpuScheduleOptions& options,
                      std::vector<std::string>* skipped,
                      const GpuBlockSampling* sampling) {
  auto note = [&](const absl::Status& status, const std::string& what) {
    if (!status.ok() && skipped != nullptr)
      skipped->push_back(absl::StrCat(what, ": ", status.message()));
  };
  const BlockNode* node = sch->program().FindBlock(name);
  if (node == nullptr) return false;
  if (!OwnsItsLoops(sch->program(), *node)) {
    note(absl::FailedPreconditionError("its loops are not its own"),
         absl::StrCat("binding of block ", name));
    return false;
  }
  const bool reduction = node->IsReduction();
  // Reductions: the first of these strategies that applies, each tried on a
  // scratch copy first so that one that fails leaves nothing in the trace.
  for (const auto& [strategy, what] : kReductionStrategies) {
    if (!reduction || !options.tiles) break;
    ConcreteSchedule scratch(sch->program());
    absl::Status dry = strategy(&scratch, name, options, sampling);
    if (dry.ok()) {
      absl::Status applied = strategy(sch, name, options, sampling);
      note(applied, absl::StrCat(what, " of block ", name));
      return applied.ok();
    }
    note(dry, absl::StrCat(what, " of block ", name));
  }
  for (bool accumulate : {true, false}) {
    if (accumulate && !reduction) continue;
    ConcreteSchedule scratch(sch->program());
    absl::Status dry = ScheduleBlock(&scratch, name, options.threads_per_block,
                                     accumulate, sampling);
    if (!dry.ok()) {
      note(dry, absl::StrCat(accumulate ? "local accumulation" : "binding",
                             " of block ", name));
      continue;
    }
    absl::Status applied = ScheduleBlock(sch, name, options.threads_per_block,
                                         accumulate, sampling);
    note(applied, absl::StrCat("binding of block ", name));
    return applied.ok();
  }
  return false;
}

DefaultGpuScheduleOptions DefaultGpuScheduleOptionsFor(
    int64_t max_threads_per_block, int64_t max_shared_memory_bytes) {
  constexpr int64_t kFloatBytes = 4;
  DefaultGpuScheduleOptions options;
  options.threads_per_block =
      std::min(options.threads_per_block, max_threads_per_block);
  options.max_shared_elements =
      std::max<int64_t>(1, max_shared_memory_bytes / kFloatBytes);
  return options;
}

absl::StatusOr<Trace> DefaultGpuSchedule(
    const Program& initial, const DefaultGpuScheduleOptions& options,
    std::vector<std::string>* skipped) {
  if (options.threads_per_block < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("default gpu schedule: threads per block ",
                     options.threads_per_block, " is not positive"));
  }
  if (options.shared_tile_k_chunk < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("default gpu schedule: K chunk ",
                     options.shared_tile_k_chunk, " is negative"));
  }
  if (options.shared_tile_max_registers != 2 &&
      options.shared_tile_max_registers != 4 &&
      options.shared_tile_max_registers != 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default gpu schedule: max registers ",
        options.shared_tile_max_registers, " is not one of 2, 4, 8"));
  }
  if (options.shared_tile_register_groups != 1 &&
      options.shared_tile_register_groups != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("default gpu schedule: register groups ",
                     options.shared_tile_register_groups, " is not 1 or 2"));
  }
  if (options.ranked_tile < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("default gpu schedule: ranked tile ", options.ranked_tile,
                     " is below -1"));
  }
  if (options.max_shared_elements < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("default gpu schedule: shared tiles of ",
                     options.max_shared_elements, " elements at most"));
  }
  TracedSchedule sch(initial);
  auto note = [&](const absl::Status& status, const std::string& what) {
    if (!status.ok() && skipped != nullptr)
      skipped->push_back(absl::StrCat(what, ": ", status.message()));
  };
  // 1. Inline, each candidate tried on a copy first so that a block that
  //    stays leaves nothing in the trace.
  //    Stages kept for a shared tile's copy are scheduled last, in step 2,
  //    when the tile has not folded them.
  std::set<std::string> kept;
  using InlineFn = absl::Status (*)(Program*, const std::string&);
  const std::pair<InlineFn, bool> passes[] = {
      {&primitive::ComputeInline, false},
      {&primitive::ReverseComputeInline, true}};
  for (const auto& [fn, reverse] : passes) {
    std::vector<std::string> names;
    for (const BlockNode* b : sch.program().Blocks()) {
      if (!b->IsReduction()) names.push_back(b->name);
    }
    for (const std::string& name : names) {
      if (sch.program().FindBlock(name) == nullptr) continue;
      if (!reverse && options.tiles &&
          KeptForSharedTile(sch.program(), name, options)) {
        kept.insert(name);
        continue;
      }
      Program copy = sch.program();
      if (!fn(&copy, name).ok()) continue;
      absl::StatusOr<BlockRV> block = sch.GetBlock(name);
      if (!block.ok()) continue;
      note(reverse ? sch.ReverseComputeInline(*block)
                   : sch.ComputeInline(*block),
           absl::StrCat(reverse ? "reverse_compute_inline" : "compute_inline",
                        " of block ", name));
    }
  }
  // 2. The blocks left, named up front (caches and inits come with them).
  std::vector<std::string> names;
  for (const BlockNode* b : sch.program().Blocks()) names.push_back(b->name);
  for (const std::string& name : names) {
    if (sch.program().FindBlock(name) == nullptr || kept.count(name)) continue;
    ScheduleGpuBlock(&sch, name, options, skipped);
  }
  for (const std::string& name : kept) {
    if (sch.program().FindBlock(name) == nullptr) continue;
    ScheduleGpuBlock(&sch, name, options, skipped);
  }
  return sch.trace();
}

}  // namespace lathe

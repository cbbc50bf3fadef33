// The choice of a shared-memory tile at any extents (gpu_tile_choice.h).
#include "compiler/schedule/gpu_tile_choice.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "compiler/arith/linear_terms.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/footprint.h"
#include "compiler/schedule/gpu_shared_tile.h"

namespace lathe {
namespace {

constexpr int64_t kWarp = 32;

// The (threads, registers) pairs of a loop of `extent`: threads x registers
// divides it, registers at most kMaxTileRegistersPerAxis, threads at most
// `max_threads`.
std::vector<std::pair<int64_t, int64_t>> AxisFactors(int64_t extent,
                                                     int64_t max_threads) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t r = 1; r <= std::min(extent, kMaxTileRegistersPerAxis); ++r) {
    if (extent % r != 0) continue;
    for (int64_t t = 1; t <= std::min(extent / r, max_threads); ++t) {
      if ((extent / r) % t == 0) pairs.emplace_back(t, r);
    }
  }
  return pairs;
}

// Scores one assignment of thread and register factors: picks its K chunk
// and fills `choice`; false when no chunk meets the bounds.
bool ScoreTile(const TileProblem& problem, const std::vector<int64_t>& layout,
               TileChoice* choice) {
  const size_t n = problem.spatial.size();
  int64_t registers = 1, outputs = 1, tile = 1;
  for (size_t d = 0; d < n; ++d) {
    registers *= choice->registers[d];
    outputs *= problem.spatial[d];
    tile *= choice->threads[d] * choice->registers[d];
  }
  int64_t rest = 1;
  for (size_t r = 1; r < problem.reduce.size(); ++r) rest *= problem.reduce[r];
  std::vector<int64_t> loop_tiles(n + problem.reduce.size());
  for (size_t d = 0; d < n; ++d)
    loop_tiles[d] = choice->threads[d] * choice->registers[d];
  for (size_t r = 1; r < problem.reduce.size(); ++r)
    loop_tiles[n + r] = problem.reduce[r];
  for (int64_t chunk = kMaxTileKChunk; chunk >= 1; chunk /= 2) {
    if (problem.reduce[0] % chunk != 0 ||
        chunk * rest * registers > kMaxTileUnrolledProducts) {
      continue;
    }
    loop_tiles[n] = chunk;
    const int64_t bound =
        std::min(kMaxSharedTileElements, problem.max_shared_elements);
    absl::StatusOr<int64_t> footprint =
        EvaluateFootprint(layout, loop_tiles, bound);
    if (!footprint.ok() || *footprint > bound) continue;
    const int64_t shared = *footprint;
    choice->k_chunk = chunk;
    choice->shared_elements = shared;
    choice->blocks = outputs / tile;
    choice->intensity = static_cast<double>(tile) *
                        static_cast<double>(chunk * rest) /
                        static_cast<double>(shared);
    choice->score =
        choice->intensity *
        std::min(1.0, static_cast<double>(choice->blocks) / kTargetBlocks);
    return true;
  }
  return false;
}

// Whether `a` ranks before `b` (see the header).
bool Better(const TileChoice& a, const TileChoice& b) {
  if (a.score != b.score) return a.score > b.score;
  int64_t ta = 1, tb = 1, ra = 1, rb = 1;
  for (int64_t t : a.threads) ta *= t;
  for (int64_t t : b.threads) tb *= t;
  for (int64_t r : a.registers) ra *= r;
  for (int64_t r : b.registers) rb *= r;
  if (ta != tb) return ta > tb;
  if (ra != rb) return ra < rb;
  // More threads along the last loop (the outputs' contiguous one): the
  // write-back's neighbouring threads store neighbouring elements.
  return a.threads.back() > b.threads.back();
}

}  // namespace

std::vector<TileChoice> RankSharedTiles(const TileProblem& problem,
                                        size_t limit) {
  const size_t n = problem.spatial.size();
  if (n < 2 || problem.reduce.empty() || limit == 0 ||
      problem.max_shared_elements < 1) {
    return {};
  }
  for (const std::vector<TileProblem::Dimension>& input : problem.inputs) {
    for (const TileProblem::Dimension& dim : input) {
      for (const TileProblem::Term& t : dim.terms) {
        if (t.loop >= n + problem.reduce.size()) return {};
      }
    }
  }
  const int64_t max_threads = std::min(kMaxTileThreads, problem.max_threads);
  // Each loop's tile is one factor: its own.
  std::vector<std::vector<int64_t>> own(n + problem.reduce.size());
  for (size_t l = 0; l < own.size(); ++l) own[l] = {static_cast<int64_t>(l)};
  const std::vector<int64_t> layout =
      TileFootprintLayout(problem, own, NonAffineSpan::kProductOfTiles);
  // The tiled loops: the last kMaxTiledLoops of more than one iteration;
  // the others stay whole (one factor pair, 1 and 1).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> axes(
      n, std::vector<std::pair<int64_t, int64_t>>{{1, 1}});
  size_t tiled_loops = 0;
  for (size_t d = n; d-- > 0 && tiled_loops < kMaxTiledLoops;) {
    if (problem.spatial[d] <= 1) continue;
    axes[d] = AxisFactors(problem.spatial[d], max_threads);
    ++tiled_loops;
  }
  int64_t visits = 0;
  std::vector<TileChoice> ranked;
  TileChoice current;
  current.threads.assign(n, 1);
  current.registers.assign(n, 1);
  // Depth-first over the loops, pruned by the thread and register bounds.
  auto visit = [&](auto&& self, size_t d, int64_t threads,
                   int64_t registers) -> void {
    if (++visits > kMaxTileVisits) return;
    if (d == n) {
      int64_t tiled = 0;
      for (size_t a = 0; a < n; ++a)
        tiled += current.threads[a] * current.registers[a] > 1;
      if (threads < kMinTileThreads || threads % kWarp != 0 ||
          registers < kMinTileRegisters || tiled < 2) {
        return;
      }
      TileChoice choice = current;
      if (!ScoreTile(problem, layout, &choice) ||
          choice.intensity < kMinTileIntensity) {
        return;
      }
      auto at = std::upper_bound(ranked.begin(), ranked.end(), choice, Better);
      if (static_cast<size_t>(at - ranked.begin()) >= limit) return;
      ranked.insert(at, std::move(choice));
      if (ranked.size() > limit) ranked.pop_back();
      return;
    }
    for (const auto& [t, r] : axes[d]) {
      if (threads * t > max_threads || registers * r > kMaxTileRegisters)
        continue;
      current.threads[d] = t;
      current.registers[d] = r;
      self(self, d + 1, threads * t, registers * r);
    }
    current.threads[d] = 1;
    current.registers[d] = 1;
  };
  visit(visit, 0, 1, 1);
  return ranked;
}

std::vector<int64_t> TileFootprintLayout(
    const TileProblem& problem,
    const std::vector<std::vector<int64_t>>& loop_factors,
    NonAffineSpan non_affine) {
  const size_t n = problem.spatial.size();
  auto factors_of = [&](size_t loop) -> std::vector<int64_t> {
    return loop < loop_factors.size() ? loop_factors[loop]
                                      : std::vector<int64_t>{};
  };
  auto extent_of = [&](size_t loop) -> int64_t {
    if (loop < n) return problem.spatial[loop];
    return loop - n < problem.reduce.size() ? problem.reduce[loop - n] : 1;
  };
  // One term: coefficient, bound, factor count, factors.
  auto term = [&](std::vector<int64_t>* dim, int64_t coefficient, size_t loop) {
    const std::vector<int64_t> factors = factors_of(loop);
    dim->push_back(coefficient);
    dim->push_back(std::max<int64_t>(1, extent_of(loop)));
    dim->push_back(static_cast<int64_t>(factors.size()));
    dim->insert(dim->end(), factors.begin(), factors.end());
  };
  std::vector<int64_t> layout = {static_cast<int64_t>(problem.inputs.size())};
  for (const std::vector<TileProblem::Dimension>& input : problem.inputs) {
    // Each dimension as [terms, term...]; a non-affine one as one dimension
    // per loop it uses (the product of their tiles), or none (1).
    std::vector<std::vector<int64_t>> dims;
    for (const TileProblem::Dimension& dim : input) {
      if (dim.affine) {
        std::vector<int64_t> words = {static_cast<int64_t>(dim.terms.size())};
        for (const TileProblem::Term& t : dim.terms)
          term(&words, t.coefficient, t.loop);
        dims.push_back(std::move(words));
        continue;
      }
      if (non_affine == NonAffineSpan::kOne) continue;
      std::set<size_t> loops;
      for (const TileProblem::Term& t : dim.terms) loops.insert(t.loop);
      for (size_t l : loops) {
        std::vector<int64_t> words = {1};
        term(&words, 1, l);
        dims.push_back(std::move(words));
      }
    }
    layout.push_back(static_cast<int64_t>(dims.size()));
    for (const std::vector<int64_t>& words : dims)
      layout.insert(layout.end(), words.begin(), words.end());
  }
  return layout;
}

std::optional<TileProblem> TileProblemOf(const Program& program,
                                         const BlockNode& block,
                                         int64_t max_threads) {
  TileProblem problem;
  problem.max_threads = max_threads;
  // Each iteration variable's loop, numbered spatial first.
  const std::vector<ForNode*> loops = program.LoopsAbove(&block);
  if (loops.size() != block.iter_vars.size()) return std::nullopt;
  std::vector<std::optional<size_t>> loop_of(block.iter_vars.size());
  std::vector<size_t> reduce_vars;
  for (const ForNode* loop : loops) {
    std::optional<size_t> var;
    for (size_t i = 0; i < block.iter_vars.size(); ++i) {
      if (block.iter_values[i].same_as(loop->var) && !loop_of[i].has_value())
        var = i;
    }
    if (!var.has_value()) return std::nullopt;
    if (block.iter_vars[*var].type == IterType::kSpatial) {
      loop_of[*var] = problem.spatial.size();
      problem.spatial.push_back(loop->extent);
    } else {
      loop_of[*var] = 0;  // numbered below, after every spatial loop
      reduce_vars.push_back(*var);
      problem.reduce.push_back(loop->extent);
    }
  }
  for (size_t r = 0; r < reduce_vars.size(); ++r)
    loop_of[reduce_vars[r]] = problem.spatial.size() + r;
  // The loop of an iteration variable `var`, or nullopt.
  auto loop_of_var = [&](const Expr& var) -> std::optional<size_t> {
    for (size_t i = 0; i < block.iter_vars.size(); ++i) {
      if (block.iter_vars[i].var.same_as(var)) return loop_of[i];
    }
    return std::nullopt;
  };
  for (const std::vector<Expr>& indices : DistinctReadIndices(block)) {
    std::vector<TileProblem::Dimension> dims;
    for (const Expr& index : indices) {
      TileProblem::Dimension dim;
      LinearTerms linear;
      CollectLinearTerms(index, 1, &linear, EqualAtoms::kMerge);
      for (const auto& [atom, coefficient] : linear.terms) {
        std::optional<size_t> loop =
            atom.is_var() ? loop_of_var(atom) : std::nullopt;
        if (loop.has_value()) {
          dim.terms.push_back({*loop, coefficient});
          continue;
        }
        // Not affine: the loops of the iteration variables it uses.
        dim.affine = false;
        for (size_t i = 0; i < block.iter_vars.size(); ++i) {
          if (UsesVar(atom, block.iter_vars[i].var))
            dim.terms.push_back({*loop_of[i], 1});
        }
      }
      dims.push_back(std::move(dim));
    }
    problem.inputs.push_back(std::move(dims));
  }
  return problem;
}

}  // namespace lathe

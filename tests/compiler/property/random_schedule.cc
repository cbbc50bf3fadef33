#include "tests/compiler/property/random_schedule.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace lathe::testing {
namespace {

// The context of one attempted call: a random block and its loops.
struct Target {
  BlockRV block;
  std::vector<LoopRV> loops;
  std::vector<int64_t> extents;
};

template <typename T>
const T& Pick(Rng* rng, const std::vector<T>& items) {
  return items[rng->UniformInt(static_cast<int64_t>(items.size()))];
}

int64_t RandomFactor(Rng* rng, int64_t extent) {
  // Mostly small factors, sometimes ones that do not divide the extent.
  static const std::vector<int64_t> kFactors = {1, 2, 3, 4, 5, 7, 8, 16};
  int64_t f = Pick(rng, kFactors);
  return std::min(f, std::max<int64_t>(extent, 1));
}

using Attempt =
    std::function<absl::Status(TracedSchedule*, Rng*, const Target&)>;

absl::Status NoLoops() {
  return absl::FailedPreconditionError("block has no loops");
}

const std::vector<std::pair<std::string, Attempt>>& Attempts() {
  static const auto* attempts = new std::vector<
      std::pair<std::string, Attempt>>{
      {"split",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         size_t i = rng->UniformInt(static_cast<int64_t>(t.loops.size()));
         int64_t f = RandomFactor(rng, t.extents[i]);
         std::vector<Factor> factors = {Factor(), Factor(f)};
         if (rng->UniformInt(2) == 0) std::swap(factors[0], factors[1]);
         return sch->Split(t.loops[i], factors).status();
       }},
      {"sample_perfect_tile+split",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         LoopRV loop = Pick(rng, t.loops);
         int64_t n = 2 + rng->UniformInt(2);
         auto tiles = sch->SamplePerfectTile(loop, n, 16);
         if (!tiles.ok()) return tiles.status();
         std::vector<Factor> factors(tiles->begin(), tiles->end());
         return sch->Split(loop, factors).status();
       }},
      {"fuse",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.size() < 2) return NoLoops();
         size_t i = rng->UniformInt(static_cast<int64_t>(t.loops.size()) - 1);
         return sch->Fuse({t.loops[i], t.loops[i + 1]}).status();
       }},
      {"reorder",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.size() < 2) return NoLoops();
         std::vector<LoopRV> order = t.loops;
         // A random permutation (Fisher-Yates with our own RNG).
         for (size_t i = order.size(); i-- > 1;) {
           std::swap(order[i],
                     order[rng->UniformInt(static_cast<int64_t>(i) + 1)]);
         }
         order.resize(2 +
                      rng->UniformInt(static_cast<int64_t>(order.size()) - 1));
         return sch->Reorder(order);
       }},
      {"parallel",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         return sch->Parallel(Pick(rng, t.loops));
       }},
      {"vectorize",
       [](TracedSchedule* sch, Rng*, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         return sch->Vectorize(t.loops.back());
       }},
      {"unroll",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         return sch->Unroll(Pick(rng, t.loops));
       }},
      {"annotate",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         auto depth =
             sch->SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
         if (!depth.ok()) return depth.status();
         int64_t value = sch->Value(*depth).value();
         if (t.loops.empty() || rng->UniformInt(2) == 0) {
           return sch->AnnotateBlock(t.block, "pragma_auto_unroll_max_step",
                                     value);
         }
         return sch->AnnotateLoop(Pick(rng, t.loops), "pragma_unroll_explicit",
                                  int64_t{1});
       }},
      {"cache_read",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         Layout layout;
         if (rng->UniformInt(3) == 0) {
           // Pack the innermost dimension in blocks, moved to the front.
           // Rank is unknown here; a layout that does not fit is refused.
           int64_t block = Pick(rng, std::vector<int64_t>{2, 3, 4});
           layout.splits = {1, block};
           layout.permutation = {1, 0, 2};
         }
         auto created =
             sch->CacheRead(t.block, rng->UniformInt(3),
                            rng->UniformInt(2) ? "global" : "local", layout);
         if (!created.ok()) return created.status();
         // Usually move the copy next to its reader.
         if (!t.loops.empty() && rng->UniformInt(4) != 0) {
           absl::Status moved = sch->ComputeAt(*created, Pick(rng, t.loops));
           (void)moved;  // a refused move leaves a valid program
         }
         return absl::OkStatus();
       }},
      {"cache_write",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         auto created = sch->CacheWrite(
             t.block, 0, rng->UniformInt(2) ? "local" : "global");
         if (!created.ok()) return created.status();
         if (!t.loops.empty() && rng->UniformInt(4) != 0) {
           absl::Status moved =
               sch->ReverseComputeAt(*created, Pick(rng, t.loops));
           (void)moved;
         }
         return absl::OkStatus();
       }},
      {"compute_at",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         // A producer of the target, at one of the target's loops.
         if (t.loops.empty()) return NoLoops();
         auto producers = sch->GetProducers(t.block);
         if (!producers.ok() || producers->empty()) return NoLoops();
         return sch->ComputeAt(Pick(rng, *producers), Pick(rng, t.loops),
                               rng->UniformInt(2) == 0);
       }},
      {"sample_compute_location+compute_at",
       [](TracedSchedule* sch, Rng*, const Target& t) -> absl::Status {
         auto loop = sch->SampleComputeLocation(t.block);
         if (!loop.ok()) return loop.status();
         return sch->ComputeAt(t.block, *loop);
       }},
      {"reverse_compute_at",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         auto consumers = sch->GetConsumers(t.block);
         if (t.loops.empty() || !consumers.ok() || consumers->empty())
           return NoLoops();
         return sch->ReverseComputeAt(Pick(rng, *consumers),
                                      Pick(rng, t.loops));
       }},
      {"compute_inline",
       [](TracedSchedule* sch, Rng*, const Target& t) -> absl::Status {
         return sch->ComputeInline(t.block);
       }},
      {"reverse_compute_inline",
       [](TracedSchedule* sch, Rng*, const Target& t) -> absl::Status {
         return sch->ReverseComputeInline(t.block);
       }},
      {"decompose_reduction",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         return sch->DecomposeReduction(t.block, Pick(rng, t.loops)).status();
       }},
      {"rfactor",
       [](TracedSchedule* sch, Rng* rng, const Target& t) -> absl::Status {
         if (t.loops.empty()) return NoLoops();
         return sch->RFactor(Pick(rng, t.loops), rng->UniformInt(2)).status();
       }},
  };
  return *attempts;
}

}  // namespace

void ApplyRandomSchedule(TracedSchedule* sch, Rng* rng, int attempts,
                         RandomScheduleStats* stats) {
  for (int a = 0; a < attempts; ++a) {
    std::vector<BlockNode*> blocks = sch->program().Blocks();
    if (blocks.empty()) return;
    std::string name = Pick(rng, blocks)->name;
    Target target;
    target.block = sch->GetBlock(name).value();
    target.loops = sch->GetLoops(target.block).value();
    for (LoopRV l : target.loops) {
      target.extents.push_back(
          sch->program().FindLoop(sch->LoopName(l).value())->extent);
    }
    const auto& [kind, attempt] = Pick(rng, Attempts());
    absl::Status status = attempt(sch, rng, target);
    if (status.ok()) {
      stats->applied[kind]++;
    } else {
      stats->rejected[kind]++;
    }
  }
}

}  // namespace lathe::testing

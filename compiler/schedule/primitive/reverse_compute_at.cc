// reverse_compute_at (declared in compute_at.h).
//
// Supported consumers read each producer buffer at the indices the producer
// writes it, up to renaming the producer's iteration variables into the
// consumer's (the write-back of cache_write, with or without a layout, or an
// element-wise epilogue): then consumer variable u takes the values its
// producer variable takes in one iteration of the loop, which must be all of
// a box, with the reduction of a reduction producer complete within one
// iteration.
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/region.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/compute_at.h"

namespace lathe::primitive {

absl::Status ReverseComputeAt(Program* program, const std::string& block_name,
                              const std::string& loop_name,
                              bool preserve_unit_loops) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reverse_compute_at: no block named \"", block_name, "\""));
  }
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("reverse_compute_at: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "reverse_compute_at: block \"", block_name,
        "\" cannot be computed at loop \"", loop_name, "\": ", why));
  };
  // 1. Where the block and the loop are, and what the block is.
  if (Contains(block, loop)) return fail("the loop is inside the block");
  if (program->EnclosingBlock(block) != program->EnclosingBlock(loop)) {
    return fail("they are not in the same block");
  }
  if (!ComesBefore(*program, loop, block))
    return fail("the block runs before the loop");
  if (block->IsReduction() || block->init != nullptr)
    return fail("it is a reduction");
  if (!BodyUsesOnlyIterVars(*block)) {
    return fail("its body uses variables other than its iteration variables");
  }
  if (!PredicateOnlyClipsDomain(*program, *block)) {
    return fail(absl::StrCat("its predicate ", block->predicate.ToString(),
                             " does more than clip its domain"));
  }
  BlockAccesses accesses = AccessesOf(*block);
  std::set<const Buffer*> writes;
  for (const BufferAccess& w : accesses.writes) writes.insert(w.buffer.get());

  // 2. Dependences on what the block writes: nothing that may now run
  // between the loop and the block's old place touches it.
  std::vector<BlockNode*> between = BlocksInterleaved(*program, loop, block);
  for (BlockNode* other : between) {
    BlockAccesses theirs = AccessesOf(*other);
    for (const auto* list : {&theirs.reads, &theirs.writes}) {
      for (const BufferAccess& a : *list) {
        if (writes.count(a.buffer.get())) {
          return fail(absl::StrCat("block \"", other->name, "\" accesses ",
                                   a.buffer->name,
                                   ", which the block writes, in between"));
        }
      }
    }
  }

  // 3. Each buffer the block reads: either nothing in between writes it, or
  // its one writer is under the loop and the block reads it at its own
  // iteration variables; that writer's region in one iteration gives the
  // block's.
  VarRanges fixed = LoopRangesAbove(*program, loop);
  fixed[loop->var.get()] = Interval::Extent(loop->extent);
  std::vector<std::optional<RegionDim>> iter_regions(block->iter_vars.size());
  std::set<const Buffer*> seen;
  bool has_producer = false;
  for (const BufferAccess& read : accesses.reads) {
    const Buffer* buffer = read.buffer.get();
    if (!seen.insert(buffer).second) continue;
    if (writes.count(buffer)) {
      return fail(absl::StrCat("it reads ", buffer->name, ", which it writes"));
    }
    std::vector<BlockNode*> writers = WritersOf(*program, buffer);
    BlockNode* producer = nullptr;
    for (BlockNode* w : writers) {
      if (Contains(loop, w)) producer = w;
    }
    if (producer == nullptr) {
      for (BlockNode* other : between) {
        for (BlockNode* w : writers) {
          if (w == other) {
            return fail(absl::StrCat("block \"", w->name, "\" writes ",
                                     buffer->name,
                                     ", which the block reads, in between"));
          }
        }
      }
      continue;
    }
    has_producer = true;
    if (writers.size() != 1) {
      return fail(
          absl::StrCat(buffer->name, " has ", writers.size(), " writers"));
    }
    auto producer_fail = [&](const std::string& why) {
      return fail(absl::StrCat("producer \"", producer->name, "\": ", why));
    };
    // 3a. The producer's writes tell which instance wrote an element.
    absl::StatusOr<std::vector<Expr>> pattern =
        InjectiveWriteIndices(*producer, *buffer);
    if (!pattern.ok())
      return producer_fail(std::string(pattern.status().message()));
    // 3b. The block reads the element that the producer's instance with the
    // block's own variables wrote (the same indices up to renaming): the
    // pairs (producer variable, block variable).
    std::vector<std::pair<int, int>> pairs;
    for (const BufferAccess& r : accesses.reads) {
      if (r.buffer.get() != buffer) continue;
      auto mismatch = [&] {
        std::string text;
        for (const Expr& i : r.indices)
          absl::StrAppend(&text, text.empty() ? "" : ", ", i.ToString());
        return fail(absl::StrCat("it reads ", buffer->name, " at [", text,
                                 "], not where \"", producer->name,
                                 "\" writes with its own iteration variables"));
      };
      absl::StatusOr<VarMap> instance =
          MatchWriteIndices(*pattern, *producer, r.indices);
      if (!instance.ok()) return mismatch();
      std::vector<std::pair<int, int>> these;
      std::set<int> used;
      for (size_t p = 0; p < producer->iter_vars.size(); ++p) {
        auto it = instance->find(producer->iter_vars[p].var);
        if (it == instance->end()) continue;
        int u = -1;
        for (size_t j = 0; j < block->iter_vars.size(); ++j) {
          if (it->second.same_as(block->iter_vars[j].var))
            u = static_cast<int>(j);
        }
        if (u < 0 || !used.insert(u).second) return mismatch();
        these.emplace_back(static_cast<int>(p), u);
      }
      if (!pairs.empty() && these != pairs) return mismatch();
      pairs = these;
    }
    // 3c. The producer's instances in one iteration: all of a box, with the
    // reduction of each complete.
    if (!PredicateOnlyClipsDomain(*program, *producer)) {
      return producer_fail(absl::StrCat("its predicate ",
                                        producer->predicate.ToString(),
                                        " does more than clip its domain"));
    }
    std::vector<ForNode*> producer_loops = program->LoopsAbove(producer);
    std::set<const ExprNode*> inner;  // loops below `loop` around the producer
    bool below = false;
    for (ForNode* l : producer_loops) {
      if (below) inner.insert(l->var.get());
      if (l == loop) below = true;
    }
    for (size_t j = 0; j < producer->iter_vars.size(); ++j) {
      if (producer->iter_vars[j].type != IterType::kReduce) continue;
      const Expr& value = producer->iter_values[j];
      if (UsesAnyVar(value,
                     [&](const Expr& v) { return !inner.count(v.get()); })) {
        return producer_fail(absl::StrCat(
            "its reduction over ", producer->iter_vars[j].var->name,
            " is not complete within one iteration"));
      }
    }
    std::vector<Expr> producer_vars;
    for (const auto& [p, u] : pairs)
      producer_vars.push_back(producer->iter_vars[p].var);
    absl::StatusOr<Region> region =
        IndicesRegionUnderLoop(*program, *producer, loop, producer_vars);
    if (!region.ok())
      return producer_fail(std::string(region.status().message()));
    if (!region->exact) {
      return producer_fail(
          "the instances it runs in one iteration are not a box");
    }
    // 3d. The block's variables take the region of their producer variables.
    for (size_t k = 0; k < pairs.size(); ++k) {
      const auto& [p, u] = pairs[k];
      int64_t consumer_extent = block->iter_vars[u].extent;
      int64_t producer_extent = producer->iter_vars[p].extent;
      if (consumer_extent > producer_extent) {
        return fail(absl::StrCat("its variable ", block->iter_vars[u].var->name,
                                 " covers ", consumer_extent, " values, \"",
                                 producer->name, "\" computes ",
                                 producer_extent));
      }
      const RegionDim& r = region->dims[k];
      if (iter_regions[u].has_value()) {
        Expr diff = Simplify(r.min - iter_regions[u]->min, fixed);
        if (!diff.is_int_imm() || diff.int_value() != 0 ||
            r.extent != iter_regions[u]->extent) {
          return fail("its producers write different regions in one iteration");
        }
      }
      iter_regions[u] = r;
    }
  }
  if (!has_producer)
    return fail("no block under the loop writes what it reads");

  // 4. New loops: the producers' region, the whole extent elsewhere.
  std::vector<RegionDim> iter_ranges;
  for (size_t j = 0; j < block->iter_vars.size(); ++j) {
    iter_ranges.push_back(iter_regions[j].value_or(
        RegionDim{IntImm(0), block->iter_vars[j].extent}));
  }
  std::unique_ptr<BlockNode> moved = CloneBlock(*block);
  LATHE_RETURN_IF_ERROR(RemoveStmt(program, block));
  StmtPtr nest = BuildBlockNest(*program, std::move(moved), iter_ranges, fixed,
                                preserve_unit_loops);
  StmtNode* const moved_nest = nest.get();
  AppendToLoop(loop, std::move(nest));
  SimplifyBindings(program, moved_nest);
  // 5. Loops that run iterations at once must still be data-parallel.
  absl::Status concurrent =
      CheckConcurrentLoopsAround(*program, loop->body.get());
  if (!concurrent.ok()) return fail(std::string(concurrent.message()));
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ReverseComputeAtInstruction() {
  // Inputs: the block and the loop. Attribute: preserve_unit_loops (0 or 1).
  static const auto* const kind = new InstructionKind{
      "reverse_compute_at",
      {"preserve_unit_loops"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
        LATHE_ASSIGN_OR_RETURN(int64_t keep, c.IntAttr(0));
        return c.sch->ReverseComputeAt(block, loop, keep != 0);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::ReverseComputeAt(BlockRV block, LoopRV loop,
                                                bool preserve_unit_loops) {
  // The "stay" location moves nothing, and is recorded all the same.
  if (!IsStayLocation(loop)) {
    LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
    LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
    LATHE_RETURN_IF_ERROR(Apply([&](Program* p) {
      return primitive::ReverseComputeAt(p, b, l, preserve_unit_loops);
    }));
  }
  Record(ReverseComputeAtInstruction(), {InputOf(block), InputOf(loop)},
         {int64_t{preserve_unit_loops}}, {});
  return absl::OkStatus();
}

}  // namespace lathe

// compute_at and ComputeLocations (reverse_compute_at is in
// reverse_compute_at.cc).
#include "compiler/schedule/primitive/compute_at.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/region.h"
#include "compiler/util/check.h"

namespace lathe::primitive {
absl::Status ComputeAt(Program* program, const std::string& block_name,
                       const std::string& loop_name, bool preserve_unit_loops) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute_at: no block named \"", block_name, "\""));
  }
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute_at: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compute_at: block \"", block_name, "\" cannot be computed at loop \"",
        loop_name, "\": ", why));
  };
  // 1. Where the block and the loop are.
  if (Contains(block, loop)) return fail("the loop is inside the block");
  if (program->EnclosingBlock(block) != program->EnclosingBlock(loop)) {
    return fail("they are not in the same block");
  }
  // 2. What the block writes: one buffer, at indices that tell which
  // instance wrote an element (its spatial variables, or a packed layout of
  // them).
  BlockAccesses accesses = AccessesOf(*block);
  if (accesses.writes.empty()) return fail("it writes nothing");
  const BufferPtr& buffer = accesses.writes[0].buffer;
  absl::StatusOr<std::vector<Expr>> pattern =
      InjectiveWriteIndices(*block, *buffer);
  if (!pattern.ok()) return fail(std::string(pattern.status().message()));
  if (program->IsOutput(buffer.get())) {
    return fail(absl::StrCat("it writes ", buffer->name, ", an output of the program"));
  }
  if (!BodyUsesOnlyIterVars(*block)) {
    return fail("its body uses variables other than its iteration variables");
  }
  if (!PredicateOnlyClipsDomain(*program, *block)) {
    return fail(absl::StrCat("its predicate ", block->predicate.ToString(),
                             " does more than clip its domain"));
  }
  for (BlockNode* writer : WritersOf(*program, buffer.get())) {
    if (writer != block) {
      return fail(absl::StrCat("block \"", writer->name, "\" also writes ",
                               buffer->name));
    }
  }
  // 3. Every consumer is under the loop and after the block.
  std::vector<BlockNode*> consumers;
  for (BlockNode* reader : ReadersOf(*program, buffer.get())) {
    if (reader == block) continue;
    std::vector<ForNode*> loops = program->LoopsAbove(reader);
    if (std::find(loops.begin(), loops.end(), loop) == loops.end()) {
      return fail(
          absl::StrCat("consumer \"", reader->name, "\" is not under it"));
    }
    if (!ComesBefore(*program, block, reader)) {
      return fail(
          absl::StrCat("consumer \"", reader->name, "\" runs before it"));
    }
    consumers.push_back(reader);
  }
  if (consumers.empty())
    return fail(absl::StrCat("nothing reads ", buffer->name));
  // 4. Dependences: nothing that may now run between the block's old and new
  // instances writes what the block reads.
  std::set<const Buffer*> reads;
  for (const BufferAccess& r : accesses.reads) reads.insert(r.buffer.get());
  for (BlockNode* other : BlocksInterleaved(*program, block, loop)) {
    for (const BufferAccess& w : AccessesOf(*other).writes) {
      if (reads.count(w.buffer.get()) && other != block) {
        return fail(absl::StrCat("block \"", other->name, "\" writes ",
                                 w.buffer->name,
                                 ", which the block reads, in between"));
      }
    }
  }
  // 5. The instances the consumers need in one iteration of the loop: each
  // read, matched against the block's writes, names the instance that wrote
  // the element; the region of those instances' spatial variables.
  VarRanges fixed = LoopRangesAbove(*program, loop);
  fixed[loop->var.get()] = Interval::Extent(loop->extent);
  std::vector<int> spatial;
  std::vector<Expr> spatial_vars;
  for (size_t j = 0; j < block->iter_vars.size(); ++j) {
    if (block->iter_vars[j].type != IterType::kSpatial) continue;
    spatial.push_back(static_cast<int>(j));
    spatial_vars.push_back(block->iter_vars[j].var);
  }
  std::optional<Region> needed;
  for (BlockNode* consumer : consumers) {
    for (const BufferAccess& read : AccessesOf(*consumer).reads) {
      if (read.buffer.get() != buffer.get()) continue;
      absl::StatusOr<VarMap> instance =
          MatchWriteIndices(*pattern, *block, read.indices);
      if (!instance.ok()) {
        return fail(absl::StrCat("consumer \"", consumer->name, "\" reads ",
                                 buffer->name, " at ",
                                 instance.status().message()));
      }
      std::vector<Expr> values;
      for (const Expr& v : spatial_vars) values.push_back(instance->at(v));
      absl::StatusOr<Region> region =
          IndicesRegionUnderLoop(*program, *consumer, loop, values);
      if (!region.ok()) return fail(std::string(region.status().message()));
      if (!needed.has_value()) {
        needed = *std::move(region);
        continue;
      }
      absl::StatusOr<Region> joined = UnionRegions(*needed, *region, fixed);
      if (!joined.ok()) return fail(std::string(joined.status().message()));
      needed = *std::move(joined);
    }
  }
  // 6. New loops: spatial variables cover the region, reduction variables
  // their whole extent.
  std::vector<RegionDim> iter_ranges;
  for (const IterVar& iv : block->iter_vars)
    iter_ranges.push_back({IntImm(0), iv.extent});
  for (size_t k = 0; k < spatial.size(); ++k)
    iter_ranges[spatial[k]] = needed->dims[k];
  std::unique_ptr<BlockNode> moved = CloneBlock(*block);
  LATHE_RETURN_IF_ERROR(RemoveStmt(program, block));
  StmtPtr nest = BuildBlockNest(*program, std::move(moved), iter_ranges, fixed,
                                preserve_unit_loops);
  PrependToLoop(loop, std::move(nest));
  SimplifyBindings(program);
  // 7. Loops that run iterations at once must still be data-parallel.
  absl::Status concurrent =
      CheckConcurrentLoopsAround(*program, loop->body.get());
  if (!concurrent.ok()) return fail(std::string(concurrent.message()));
  return absl::OkStatus();
}

std::vector<std::string> ComputeLocations(const Program& program,
                                          const std::string& block_name) {
  BlockNode* block = program.FindBlock(block_name);
  if (block == nullptr || block == program.root.get()) return {};
  // Candidates: the loops above the block's consumers, in program order.
  std::set<const ForNode*> candidates;
  for (const BufferPtr& written : BuffersWritten(*block)) {
    for (BlockNode* reader : ReadersOf(program, written.get())) {
      if (reader == block) continue;
      for (ForNode* l : program.LoopsAbove(reader)) candidates.insert(l);
    }
  }
  std::vector<std::string> locations;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               const auto* loop = s->as<ForNode>();
               if (loop == nullptr || !candidates.count(loop)) return true;
               Program trial = program;
               if (ComputeAt(&trial, block_name, loop->var->name,
                             /*preserve_unit_loops=*/true)
                       .ok()) {
                 locations.push_back(loop->var->name);
               }
               return true;
             });
  return locations;
}

}  // namespace lathe::primitive

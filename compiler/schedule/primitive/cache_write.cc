#include "compiler/schedule/primitive/cache_write.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/block_predicate.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/stage_builder.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

absl::StatusOr<std::string> CacheWrite(Program* program,
                                       const std::string& block_name,
                                       int64_t write_index, BufferScope scope,
                                       const Layout& layout) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_write: no block named \"", block_name, "\""));
  }
  // 1. The buffer: the write_index-th distinct buffer written.
  BlockAccesses accesses = AccessesOf(*block);
  std::vector<BufferPtr> writes;
  std::set<const Buffer*> seen;
  for (const BufferAccess& w : accesses.writes) {
    if (seen.insert(w.buffer.get()).second) writes.push_back(w.buffer);
  }
  LATHE_ASSIGN_OR_RETURN(
      CacheChoice choice,
      ChooseCachedBuffer(writes, write_index, layout, "cache_write", block_name,
                         "writes"));
  const BufferPtr& buffer = choice.buffer;
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache_write: buffer \"", buffer->name, "\" of block \"",
                     block_name, "\": ", why));
  };

  // 2. Preconditions (see the header).
  if (program->IsInput(buffer.get())) return fail("is a program input");
  for (BlockNode* other : program->Blocks()) {
    if (other == block) continue;
    for (const BufferAccess& w : AccessesOf(*other).writes) {
      if (w.buffer == buffer) {
        return fail(absl::StrCat("block \"", other->name, "\" writes it too"));
      }
    }
  }
  if (program->EnclosingBlock(block) != program->root.get()) {
    return fail("the block is not at the root scope");
  }
  StmtNode* top = TopLevelStmt(*program, block);
  if (top == nullptr) return fail("the block is not inside the root's body");
  for (BlockNode* other : BlocksIn(top)) {
    if (other == block) continue;
    for (const BufferAccess& r : AccessesOf(*other).reads) {
      if (r.buffer == buffer) {
        return fail(absl::StrCat(
            "block \"", other->name,
            "\" reads it in the same loop nest, before the write-back"));
      }
    }
  }
  for (const BufferAccess& w : accesses.writes) {
    if (w.buffer == buffer &&
        !IndexesWholeShape(*block, w.indices, buffer->shape)) {
      return fail(
          "the block does not write it at distinct spatial iteration variables "
          "covering its shape");
    }
  }
  VarRanges ranges = LoopRangesAbove(*program, block);
  for (const Expr& conjunct : Conjuncts(block->predicate)) {
    if (TailGuardedIterVar(*block, conjunct, ranges) < 0) {
      return fail(absl::StrCat("the block's predicate ", conjunct.ToString(),
                               " may skip elements"));
    }
  }

  // 3. The cache and the write-back block: buffer[v] = cache[layout(v)].
  NameAllocator names(*program);
  std::string cache_name =
      names.Fresh(absl::StrCat(buffer->name, "_", BufferScopeName(scope)));
  BufferPtr cache =
      MakeBuffer(cache_name, buffer->dtype, choice.cache_shape, scope);
  std::vector<IterVarSpec> specs;
  for (size_t d = 0; d < buffer->shape.size(); ++d) {
    specs.push_back(
        {absl::StrCat("ax", d), buffer->shape[d], IterType::kSpatial});
  }
  StageNest write_back = BuildStageNest(&names, cache_name, specs);
  write_back.block->body =
      MakeStore(buffer, write_back.iter_vars,
                Load(cache, LayoutIndices(layout, write_back.iter_vars)));

  // 4. Redirect the block's accesses, allocate the cache, place the write-back.
  RedirectAccesses(
      block, buffer, cache,
      [&](const std::vector<Expr>& indices) {
        return LayoutIndices(layout, indices);
      },
      /*stores=*/true);
  program->root->alloc_buffers.push_back(cache);
  if (!InsertBeside(program, top, std::move(write_back.nest), /*after=*/true)) {
    return absl::InternalError(
        "cache_write: cannot place the write-back block");
  }
  return cache_name;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& CacheWriteInstruction() {
  // Input: the block. Attributes: the buffer's index, the scope, and the
  // layout's splits and permutation (both left out for the identity).
  // Output: the new copy block.
  static const auto* const kind = new InstructionKind{
      "cache_write",
      {"write_index", "scope", "layout_splits", "layout_permutation"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(int64_t index, c.IntAttr(0));
        LATHE_ASSIGN_OR_RETURN(std::string scope, c.StringAttr(1));
        Layout layout;
        if (auto s = c.IntsAttr(2); s.ok()) layout.splits = *s;
        if (auto p = c.IntsAttr(3); p.ok()) layout.permutation = *p;
        LATHE_ASSIGN_OR_RETURN(BlockRV created,
                               c.sch->CacheWrite(block, index, scope, layout));
        return c.Outputs({created.id});
      }};
  return *kind;
}

absl::StatusOr<BlockRV> ConcreteSchedule::CacheWrite(BlockRV block,
                                                     int64_t write_index,
                                                     const std::string& scope,
                                                     const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  absl::StatusOr<BufferScope> parsed = ParseBufferScope(scope);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_write: ", parsed.status().message()));
  }
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(
        created, primitive::CacheWrite(p, name, write_index, *parsed, layout));
    return absl::OkStatus();
  }));
  BlockRV result = NewBlockRV(created);
  std::optional<AttrValue> splits, permutation;
  if (!layout.empty()) {
    splits = layout.splits;
    permutation = layout.permutation;
  }
  Record(CacheWriteInstruction(), {InputOf(block)},
         {write_index, scope, std::move(splits), std::move(permutation)},
         {result.id});
  return result;
}

}  // namespace lathe

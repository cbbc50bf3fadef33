#include "compiler/schedule/primitive/cache_read.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/stage_builder.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {
namespace {

// Whether every element of `buffer` holds a value before it is read: inputs
// do, and so does a buffer one of whose writers stores at exactly its own
// spatial iteration variables over the whole shape. A packed cache with a
// padded layout does not: its padding is never written, so a copy of the
// whole buffer would read garbage.
bool WrittenEverywhere(const Program& program, const BufferPtr& buffer) {
  if (program.IsInput(buffer.get())) return true;
  for (BlockNode* writer : WritersOf(program, buffer.get())) {
    for (const BufferAccess& w : AccessesOf(*writer).writes) {
      if (w.buffer == buffer &&
          IndexesWholeShape(*writer, w.indices, buffer->shape)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> CacheRead(Program* program,
                                      const std::string& block_name,
                                      int64_t read_index, BufferScope scope,
                                      const Layout& layout) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_read: no block named \"", block_name, "\""));
  }
  // 1. The buffer: the read_index-th distinct buffer read and not written.
  BlockAccesses accesses = AccessesOf(*block);
  std::set<const Buffer*> written;
  for (const BufferAccess& w : accesses.writes) written.insert(w.buffer.get());
  std::vector<BufferPtr> reads;
  std::set<const Buffer*> seen;
  for (const BufferAccess& r : accesses.reads) {
    if (written.count(r.buffer.get()) || !seen.insert(r.buffer.get()).second)
      continue;
    reads.push_back(r.buffer);
  }
  LATHE_ASSIGN_OR_RETURN(CacheChoice choice,
                         ChooseCachedBuffer(reads, read_index, layout,
                                            "cache_read", block_name, "reads"));
  const BufferPtr& buffer = choice.buffer;
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache_read: buffer \"", buffer->name, "\" of block \"",
                     block_name, "\": ", why));
  };

  if (!WrittenEverywhere(*program, buffer)) {
    return fail(
        "not every element of it is written (a padded layout?), so a copy "
        "of all of it would read unwritten elements");
  }

  // 2. Where the copy goes: right before the top-level statement holding the
  // block, which must not itself produce the buffer (the copy reads all of
  // it before that statement runs).
  if (program->EnclosingBlock(block) != program->root.get()) {
    return fail("the block is not at the root scope");
  }
  StmtNode* top = TopLevelStmt(*program, block);
  if (top == nullptr) return fail("the block is not inside the root's body");
  for (BlockNode* other : BlocksIn(top)) {
    for (const BufferAccess& w : AccessesOf(*other).writes) {
      if (w.buffer == buffer) {
        return fail(
            absl::StrCat("block \"", other->name,
                         "\" writes it in the same loop nest, so it is not "
                         "complete before the nest"));
      }
    }
  }

  // 3. The cache and the copy block: cache[layout(v)] = buffer[v].
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
  StageNest copy = BuildStageNest(&names, cache_name, specs);
  copy.block->body = MakeStore(cache, LayoutIndices(layout, copy.iter_vars),
                               Load(buffer, copy.iter_vars));

  // 4. Redirect the block's reads, allocate the cache, place the copy.
  RedirectAccesses(
      block, buffer, cache,
      [&](const std::vector<Expr>& indices) {
        return LayoutIndices(layout, indices);
      },
      /*stores=*/false);
  program->root->alloc_buffers.push_back(cache);
  if (!InsertBeside(program, top, std::move(copy.nest), /*after=*/false)) {
    return absl::InternalError("cache_read: cannot place the copy block");
  }
  return cache_name;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& CacheReadInstruction() {
  // Input: the block. Attributes: the buffer's index, the scope, and the
  // layout's splits and permutation (both left out for the identity).
  // Output: the new copy block.
  static const auto* const kind = new InstructionKind{
      "cache_read",
      {"read_index", "scope", "layout_splits", "layout_permutation"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(int64_t index, c.IntAttr(0));
        LATHE_ASSIGN_OR_RETURN(std::string scope, c.StringAttr(1));
        Layout layout;
        if (auto s = c.IntsAttr(2); s.ok()) layout.splits = *s;
        if (auto p = c.IntsAttr(3); p.ok()) layout.permutation = *p;
        LATHE_ASSIGN_OR_RETURN(BlockRV created,
                               c.sch->CacheRead(block, index, scope, layout));
        return c.Outputs({created.id});
      }};
  return *kind;
}

absl::StatusOr<BlockRV> ConcreteSchedule::CacheRead(BlockRV block,
                                                    int64_t read_index,
                                                    const std::string& scope,
                                                    const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  absl::StatusOr<BufferScope> parsed = ParseBufferScope(scope);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_read: ", parsed.status().message()));
  }
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(
        created, primitive::CacheRead(p, name, read_index, *parsed, layout));
    return absl::OkStatus();
  }));
  BlockRV result = NewBlockRV(created);
  std::optional<AttrValue> splits, permutation;
  if (!layout.empty()) {
    splits = layout.splits;
    permutation = layout.permutation;
  }
  Record(CacheReadInstruction(), {InputOf(block)},
         {read_index, scope, std::move(splits), std::move(permutation)},
         {result.id});
  return result;
}

}  // namespace lathe

// compute_inline (reverse_compute_inline is in reverse_compute_inline.cc).
#include "compiler/schedule/primitive/compute_inline.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/inlined_size.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

absl::Status ComputeInline(Program* program, const std::string& block_name) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute_inline: no block named \"", block_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compute_inline: block \"", block_name, "\" cannot be inlined: ", why));
  };
  // 1. The block: one store of its buffer at indices that tell which
  // instance wrote an element (its iteration variables, or a packed layout).
  if (block->IsReduction() || block->init != nullptr)
    return fail("it is a reduction");
  const auto* store = block->body ? block->body->as<StoreNode>() : nullptr;
  if (store == nullptr) return fail("its body is not a single store");
  const BufferPtr buffer = store->buffer;
  absl::StatusOr<std::vector<Expr>> pattern =
      InjectiveWriteIndices(*block, *buffer);
  if (!pattern.ok()) return fail(std::string(pattern.status().message()));
  if (program->IsOutput(buffer.get())) {
    return fail(
        absl::StrCat("it writes ", buffer->name, ", an output of the program"));
  }
  if (ReadsBuffer(store->value, buffer.get())) {
    return fail(absl::StrCat("it reads ", buffer->name, ", which it writes"));
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
  // 2. What the value reads must not change once the block has run: every
  // writer of it finishes before the block's first instance (it comes
  // before the block, and no loop holds both).
  std::set<const Buffer*> reads;
  VisitExpr(store->value, [&](const Expr& e) {
    if (e.is(ExprKind::kLoad)) reads.insert(e->buffer.get());
  });
  for (const Buffer* read : reads) {
    for (BlockNode* writer : WritersOf(*program, read)) {
      bool shares_loop = false;
      for (const StmtNode* p = program->ParentOf(block); p != nullptr;
           p = program->ParentOf(p)) {
        if (p->kind == StmtKind::kFor && Contains(p, writer))
          shares_loop = true;
      }
      if (shares_loop || !ComesBefore(*program, writer, block)) {
        return fail(
            absl::StrCat("block \"", writer->name, "\" writes ", read->name,
                         ", which it reads, while its value is in use"));
      }
    }
  }
  // 3. Every read names the instance that wrote the element.
  std::vector<std::string> consumer_names;
  for (BlockNode* reader : ReadersOf(*program, buffer.get())) {
    consumer_names.push_back(reader->name);
    for (const BufferAccess& read : AccessesOf(*reader).reads) {
      if (read.buffer.get() != buffer.get()) continue;
      for (const Expr& index : read.indices) {
        if (ReadsBuffer(index, buffer.get())) {
          return fail(absl::StrCat("block \"", reader->name, "\" reads ",
                                   buffer->name, " at indices that read it"));
        }
      }
      absl::StatusOr<VarMap> instance =
          MatchWriteIndices(*pattern, *block, read.indices);
      if (!instance.ok()) {
        return fail(absl::StrCat("block \"", reader->name, "\" reads ",
                                 buffer->name, " at ",
                                 instance.status().message()));
      }
    }
  }
  // 4. The expressions that read the buffer stay within the size limit.
  int64_t largest = 0;
  VisitStmts(program->root.get(), [&](const StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      largest = std::max(largest, InlinedExprSize(e, *buffer, store->value,
                                                  kMaxInlinedExprNodes));
    });
    return largest <= kMaxInlinedExprNodes;
  });
  if (largest > kMaxInlinedExprNodes) {
    return fail(absl::StrCat(
        "an expression reading ", buffer->name, " would grow to more than ",
        "kMaxInlinedExprNodes (", kMaxInlinedExprNodes, ") nodes"));
  }
  // 5. Replace every load of the buffer by the value of that instance.
  std::vector<Expr> written = *pattern;
  Expr value = store->value;
  std::unique_ptr<BlockNode> writer =
      CloneBlock(*block);  // outlives the removal
  LATHE_RETURN_IF_ERROR(RemoveStmt(program, block));
  auto inline_load = [&](const Expr& e) -> Expr {
    if (!e.is(ExprKind::kLoad) || e->buffer.get() != buffer.get()) return e;
    absl::StatusOr<VarMap> at =
        MatchWriteIndices(written, *writer, e->operands);
    LATHE_CHECK(at.ok(),
                "compute_inline: a read matched before no longer matches");
    return Simplify(Substitute(value, *at));
  };
  MutateAllExprs(program->root.get(),
                 [&](const Expr& e) { return MutateExpr(e, inline_load); });
  RemoveAllocation(program, buffer.get());
  SimplifyBindings(program);
  // 6. Loops that run iterations at once must still be data-parallel.
  for (const std::string& name : consumer_names) {
    absl::Status concurrent =
        CheckConcurrentLoopsAround(*program, program->FindBlock(name));
    if (!concurrent.ok()) return fail(std::string(concurrent.message()));
  }
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ComputeInlineInstruction() {
  // Input: the block.
  static const auto* const kind =
      new InstructionKind{"compute_inline",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
                            return c.sch->ComputeInline(block);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::ComputeInline(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::ComputeInline(p, name); }));
  Record(ComputeInlineInstruction(), {InputOf(block)}, {}, {});
  return absl::OkStatus();
}

}  // namespace lathe

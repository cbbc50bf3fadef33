// reverse_compute_inline (declared in compute_inline.h).
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/inlined_size.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/compute_inline.h"

namespace lathe::primitive {

absl::Status ReverseComputeInline(Program* program,
                                  const std::string& block_name) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reverse_compute_inline: no block named \"", block_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("reverse_compute_inline: block \"", block_name,
                     "\" cannot be inlined: ", why));
  };
  // 1. The block: one store, not a reduction, the only writer of its buffer.
  if (block->IsReduction() || block->init != nullptr)
    return fail("it is a reduction");
  const auto* store = block->body ? block->body->as<StoreNode>() : nullptr;
  if (store == nullptr) return fail("its body is not a single store");
  const BufferPtr out = store->buffer;
  if (!BodyUsesOnlyIterVars(*block)) {
    return fail("its body uses variables other than its iteration variables");
  }
  if (!PredicateOnlyClipsDomain(*program, *block)) {
    return fail(absl::StrCat("its predicate ", block->predicate.ToString(),
                             " does more than clip its domain"));
  }
  for (BlockNode* writer : WritersOf(*program, out.get())) {
    if (writer != block) {
      return fail(
          absl::StrCat("block \"", writer->name, "\" also writes ", out->name));
    }
  }
  // 2. It reads exactly one buffer that a block writes; everything else it
  // reads is never written.
  BlockAccesses accesses = AccessesOf(*block);
  BufferPtr input;
  for (const BufferAccess& r : accesses.reads) {
    if (WritersOf(*program, r.buffer.get()).empty()) continue;
    if (input != nullptr && input.get() != r.buffer.get()) {
      return fail(absl::StrCat("it reads both ", input->name, " and ",
                               r.buffer->name, ", which other blocks write"));
    }
    input = r.buffer;
  }
  if (input == nullptr)
    return fail("it reads no buffer that another block writes");
  for (const Expr& index : store->indices) {
    if (ReadsBuffer(index, input.get())) {
      return fail(absl::StrCat("its store indices read ", input->name));
    }
  }
  // 3. The producer: the only writer and the block the only reader; one
  // store, not a reduction.
  if (program->IsOutput(input.get())) {
    return fail(absl::StrCat(input->name, " is an output of the program"));
  }
  std::vector<BlockNode*> writers = WritersOf(*program, input.get());
  if (writers.size() != 1) {
    return fail(absl::StrCat(input->name, " has ", writers.size(), " writers"));
  }
  BlockNode* producer = writers[0];
  auto producer_fail = [&](const std::string& why) {
    return fail(absl::StrCat("producer \"", producer->name, "\": ", why));
  };
  if (producer->IsReduction() || producer->init != nullptr) {
    return producer_fail("it is a reduction");
  }
  for (BlockNode* reader : ReadersOf(*program, input.get())) {
    if (reader != block) {
      return fail(absl::StrCat("block \"", reader->name, "\" also reads ",
                               input->name));
    }
  }
  auto* producer_store =
      producer->body ? producer->body->as<StoreNode>() : nullptr;
  if (producer_store == nullptr)
    return producer_fail("its body is not a single store");
  absl::StatusOr<std::vector<Expr>> pattern =
      InjectiveWriteIndices(*producer, *input);
  if (!pattern.ok())
    return producer_fail(std::string(pattern.status().message()));
  // The block reads, at its own variables, the element that the producer's
  // instance with the same values wrote (the same indices up to renaming),
  // over the same extents: then the two blocks' instances pair up.
  VarMap to_producer;  // block variable -> producer variable
  for (const BufferAccess& r : accesses.reads) {
    if (r.buffer.get() != input.get()) continue;
    auto mismatch = [&] {
      std::string text;
      for (const Expr& i : r.indices)
        absl::StrAppend(&text, text.empty() ? "" : ", ", i.ToString());
      return fail(absl::StrCat("it reads ", input->name, " at [", text,
                               "], not where \"", producer->name,
                               "\" writes with its own iteration variables"));
    };
    absl::StatusOr<VarMap> instance =
        MatchWriteIndices(*pattern, *producer, r.indices);
    if (!instance.ok()) return mismatch();
    VarMap these;
    for (const auto& [theirs, mine] : *instance) {
      bool is_mine = false;
      for (const IterVar& iv : block->iter_vars)
        is_mine = is_mine || mine.same_as(iv.var);
      if (!is_mine || these.count(mine)) return mismatch();
      these[mine] = theirs;
    }
    if (these.size() != block->iter_vars.size()) return mismatch();
    if (!to_producer.empty()) {
      for (const auto& [mine, theirs] : these) {
        if (!to_producer.at(mine).same_as(theirs)) return mismatch();
      }
    }
    to_producer = these;
  }
  for (const IterVar& mine : block->iter_vars) {
    const Expr& theirs = to_producer.at(mine.var);
    for (const IterVar& iv : producer->iter_vars) {
      if (iv.var.same_as(theirs) && iv.extent != mine.extent) {
        return fail(absl::StrCat("its variable ", mine.var->name, " covers ",
                                 mine.extent, " values, \"", producer->name,
                                 "\" computes ", iv.extent));
      }
    }
  }
  if (ReadsBuffer(producer_store->value, out.get())) {
    return producer_fail(absl::StrCat("it reads ", out->name));
  }
  // 4. Dependences: nothing between the producer and the block touches what
  // the block writes.
  if (!ComesBefore(*program, producer, block))
    return fail("it runs before its producer");
  for (BlockNode* other : BlocksInterleaved(*program, producer, block)) {
    BlockAccesses theirs = AccessesOf(*other);
    for (const auto* list : {&theirs.reads, &theirs.writes}) {
      for (const BufferAccess& a : *list) {
        if (a.buffer.get() == out.get()) {
          return fail(absl::StrCat("block \"", other->name, "\" accesses ",
                                   out->name, " in between"));
        }
      }
    }
  }
  // 5. The producer stores the block's value, with its own value for the
  // load, at the block's indices in the producer's variables.
  Expr produced = producer_store->value;
  const int64_t size =
      InlinedExprSize(store->value, *input, produced, kMaxInlinedExprNodes);
  if (size > kMaxInlinedExprNodes) {
    return fail(absl::StrCat("its value would grow to more than ",
                             "kMaxInlinedExprNodes (", kMaxInlinedExprNodes,
                             ") nodes"));
  }
  Expr value = MutateExpr(store->value, [&](const Expr& e) {
    return e.is(ExprKind::kLoad) && e->buffer.get() == input.get() ? produced
                                                                   : e;
  });
  std::vector<Expr> indices;
  for (const Expr& i : store->indices)
    indices.push_back(Simplify(Substitute(i, to_producer)));
  producer->body = MakeStore(out, std::move(indices),
                             Simplify(Substitute(value, to_producer)));
  LATHE_RETURN_IF_ERROR(RemoveStmt(program, block));
  RemoveAllocation(program, input.get());
  SimplifyBindings(program);
  // 6. Loops that run iterations at once must still be data-parallel.
  absl::Status concurrent = CheckConcurrentLoopsAround(*program, producer);
  if (!concurrent.ok()) return fail(std::string(concurrent.message()));
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ReverseComputeInlineInstruction() {
  // Input: the block.
  static const auto* const kind =
      new InstructionKind{"reverse_compute_inline",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
                            return c.sch->ReverseComputeInline(block);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::ReverseComputeInline(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  LATHE_RETURN_IF_ERROR(Apply(
      [&](Program* p) { return primitive::ReverseComputeInline(p, name); }));
  Record(ReverseComputeInlineInstruction(), {InputOf(block)}, {}, {});
  return absl::OkStatus();
}

}  // namespace lathe

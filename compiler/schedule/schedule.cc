#include "compiler/schedule/schedule.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe {

ConcreteSchedule::ConcreteSchedule(Program program, uint64_t seed)
    : program_(std::move(program)), rng_(seed) {}

BlockRV ConcreteSchedule::NewBlockRV(const std::string& name) {
  rvs_.push_back({RVEntry::Kind::kBlock, name, 0});
  return BlockRV{static_cast<int64_t>(rvs_.size()) - 1};
}

LoopRV ConcreteSchedule::NewLoopRV(const std::string& name) {
  rvs_.push_back({RVEntry::Kind::kLoop, name, 0});
  return LoopRV{static_cast<int64_t>(rvs_.size()) - 1};
}

ExprRV ConcreteSchedule::NewExprRV(int64_t value) {
  rvs_.push_back({RVEntry::Kind::kExpr, "", value});
  return ExprRV{static_cast<int64_t>(rvs_.size()) - 1};
}

absl::StatusOr<const ConcreteSchedule::RVEntry*> ConcreteSchedule::Entry(
    int64_t id, RVEntry::Kind kind, const char* what) const {
  if (id < 0 || id >= static_cast<int64_t>(rvs_.size()) ||
      rvs_[id].kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schedule: r", id, " is not a ", what, " of this schedule"));
  }
  return &rvs_[id];
}

absl::StatusOr<std::string> ConcreteSchedule::BlockName(BlockRV block) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(block.id, RVEntry::Kind::kBlock, "block"));
  if (program_.FindBlock(e->name) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("schedule: block \"", e->name, "\" (r", block.id,
                     ") no longer exists"));
  }
  return e->name;
}

absl::StatusOr<std::string> ConcreteSchedule::LoopName(LoopRV loop) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(loop.id, RVEntry::Kind::kLoop, "loop"));
  if (program_.FindLoop(e->name) == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "schedule: loop \"", e->name, "\" (r", loop.id, ") no longer exists"));
  }
  return e->name;
}

bool ConcreteSchedule::IsStayLocation(LoopRV loop) const {
  absl::StatusOr<const RVEntry*> e =
      Entry(loop.id, RVEntry::Kind::kLoop, "loop");
  return e.ok() && (*e)->name.empty();
}

absl::StatusOr<int64_t> ConcreteSchedule::Value(ExprRV value) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(value.id, RVEntry::Kind::kExpr, "value"));
  return e->value;
}

absl::Status ConcreteSchedule::Apply(
    const std::function<absl::Status(Program*)>& fn) {
  Program copy = program_;
  LATHE_RETURN_IF_ERROR(fn(&copy));
  program_ = std::move(copy);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ConcreteSchedule::FactorValue(
    const Factor& factor) const {
  if (const auto* c = std::get_if<int64_t>(&factor)) return *c;
  if (const auto* rv = std::get_if<ExprRV>(&factor)) return Value(*rv);
  return absl::InternalError("schedule: an inferred factor has no value");
}

void ConcreteSchedule::Record(const InstructionKind& kind,
                              std::vector<TraceInput> inputs,
                              std::vector<std::optional<AttrValue>> attrs,
                              std::vector<int64_t> outputs,
                              std::optional<std::vector<int64_t>> decision) {
  LATHE_CHECK(attrs.size() == kind.attrs.size(), kind.name, ": ", attrs.size(),
              " attributes for ", kind.attrs.size(), " names");
  LATHE_CHECK(decision.has_value() == kind.samples, kind.name,
              kind.samples ? " samples: it needs a decision"
                           : " samples nothing: it takes no decision");
  Instruction instruction{kind.name, std::move(inputs), {}, std::move(outputs)};
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].has_value())
      instruction.attrs.emplace_back(kind.attrs[i], *std::move(attrs[i]));
  }
  Applied(std::move(instruction), std::move(decision));
}

// The queries' instruction kinds. Inputs: the block (get_block: none; its
// attribute is the block's name). Outputs: the blocks or loops found.
const InstructionKind& GetBlockInstruction() {
  static const auto* const kind = new InstructionKind{
      "get_block",
      {"name"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(std::string name, c.StringAttr(0));
        LATHE_ASSIGN_OR_RETURN(BlockRV b, c.sch->GetBlock(name));
        return c.Outputs({b.id});
      }};
  return *kind;
}

const InstructionKind& GetLoopsInstruction() {
  static const auto* const kind = new InstructionKind{
      "get_loops",
      {},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.sch->GetLoops(b));
        return c.Outputs(IdsOf(loops));
      }};
  return *kind;
}

const InstructionKind& GetProducersInstruction() {
  static const auto* const kind =
      new InstructionKind{"get_producers",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
                            LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                                                   c.sch->GetProducers(b));
                            return c.Outputs(IdsOf(blocks));
                          }};
  return *kind;
}

const InstructionKind& GetConsumersInstruction() {
  static const auto* const kind =
      new InstructionKind{"get_consumers",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
                            LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                                                   c.sch->GetConsumers(b));
                            return c.Outputs(IdsOf(blocks));
                          }};
  return *kind;
}

absl::StatusOr<BlockRV> ConcreteSchedule::GetBlock(const std::string& name) {
  if (program_.FindBlock(name) == nullptr || name == "root") {
    std::string known;
    for (BlockNode* b : program_.Blocks())
      absl::StrAppend(&known, known.empty() ? "" : ", ", b->name);
    return absl::InvalidArgumentError(absl::StrCat(
        "get_block: no block named \"", name, "\"; blocks: ", known));
  }
  BlockRV block = NewBlockRV(name);
  Record(GetBlockInstruction(), {}, {name}, {block.id});
  return block;
}

absl::StatusOr<std::vector<LoopRV>> ConcreteSchedule::GetLoops(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<LoopRV> loops;
  for (ForNode* loop : program_.LoopsAbove(program_.FindBlock(name))) {
    loops.push_back(NewLoopRV(loop->var->name));
  }
  Record(GetLoopsInstruction(), {InputOf(block)}, {}, IdsOf(loops));
  return loops;
}

namespace {
bool Intersects(const std::vector<BufferPtr>& a,
                const std::vector<BufferPtr>& b) {
  for (const BufferPtr& x : a) {
    for (const BufferPtr& y : b) {
      if (x == y) return true;
    }
  }
  return false;
}
}  // namespace

absl::StatusOr<std::vector<BlockRV>> ConcreteSchedule::GetProducers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<BufferPtr> reads = BuffersRead(*program_.FindBlock(name));
  std::vector<BlockRV> producers;
  for (BlockNode* b : program_.Blocks()) {
    if (b->name != name && Intersects(BuffersWritten(*b), reads)) {
      producers.push_back(NewBlockRV(b->name));
    }
  }
  Record(GetProducersInstruction(), {InputOf(block)}, {}, IdsOf(producers));
  return producers;
}

absl::StatusOr<std::vector<BlockRV>> ConcreteSchedule::GetConsumers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<BufferPtr> writes = BuffersWritten(*program_.FindBlock(name));
  std::vector<BlockRV> consumers;
  for (BlockNode* b : program_.Blocks()) {
    if (b->name != name && Intersects(BuffersRead(*b), writes)) {
      consumers.push_back(NewBlockRV(b->name));
    }
  }
  Record(GetConsumersInstruction(), {InputOf(block)}, {}, IdsOf(consumers));
  return consumers;
}

}  // namespace lathe

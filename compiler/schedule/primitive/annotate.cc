#include "compiler/schedule/primitive/annotate.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

absl::Status AnnotateLoop(Program* program, const std::string& loop,
                          const std::string& key,
                          const AnnotationValue& value) {
  if (key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate_loop: empty key for loop \"", loop, "\""));
  }
  ForNode* node = program->FindLoop(loop);
  if (node == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate_loop: no loop named \"", loop, "\""));
  }
  node->annotations[key] = value;
  return absl::OkStatus();
}

absl::Status AnnotateBlock(Program* program, const std::string& block,
                           const std::string& key,
                           const AnnotationValue& value) {
  if (key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate_block: empty key for block \"", block, "\""));
  }
  BlockNode* node = program->FindBlock(block);
  if (node == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate_block: no block named \"", block, "\""));
  }
  node->annotations[key] = value;
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {
namespace {

AttrValue ToAttr(const AnnotationValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::get<std::string>(v);
}

absl::StatusOr<AnnotationValue> AnnotationAttr(const ReplayContext& c) {
  LATHE_ASSIGN_OR_RETURN(AttrValue v, c.Attr(1));
  if (const auto* i = std::get_if<int64_t>(&v)) return AnnotationValue(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return AnnotationValue(*s);
  return absl::InvalidArgumentError(
      absl::StrCat(c.inst.kind, ": value must be an integer or a string"));
}

}  // namespace

const InstructionKind& AnnotateLoopInstruction() {
  // Input: the loop. Attributes: the key and the value (an integer or a
  // string).
  static const auto* const kind = new InstructionKind{
      "annotate_loop",
      {"key", "value"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
        LATHE_ASSIGN_OR_RETURN(std::string key, c.StringAttr(0));
        LATHE_ASSIGN_OR_RETURN(AnnotationValue value, AnnotationAttr(c));
        return c.sch->AnnotateLoop(loop, key, value);
      }};
  return *kind;
}

const InstructionKind& AnnotateBlockInstruction() {
  // Input: the block. Attributes: as annotate_loop.
  static const auto* const kind = new InstructionKind{
      "annotate_block",
      {"key", "value"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(std::string key, c.StringAttr(0));
        LATHE_ASSIGN_OR_RETURN(AnnotationValue value, AnnotationAttr(c));
        return c.sch->AnnotateBlock(block, key, value);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::AnnotateLoop(LoopRV loop, const std::string& key,
                                            const AnnotationValue& value) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) {
    return primitive::AnnotateLoop(p, name, key, value);
  }));
  Record(AnnotateLoopInstruction(), {InputOf(loop)}, {key, ToAttr(value)}, {});
  return absl::OkStatus();
}

absl::Status ConcreteSchedule::AnnotateBlock(BlockRV block,
                                             const std::string& key,
                                             const AnnotationValue& value) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) {
    return primitive::AnnotateBlock(p, name, key, value);
  }));
  Record(AnnotateBlockInstruction(), {InputOf(block)}, {key, ToAttr(value)},
         {});
  return absl::OkStatus();
}

}  // namespace lathe

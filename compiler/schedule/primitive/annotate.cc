#include "compiler/schedule/primitive/annotate.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

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

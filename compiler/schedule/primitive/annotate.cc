#include "compiler/schedule/primitive/annotate.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status AnnotateLoop(Program*, const std::string&, const std::string&, const AnnotationValue&) { return absl::UnimplementedError("not implemented yet"); }

absl::Status AnnotateBlock(Program*, const std::string&, const std::string&, const AnnotationValue&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

#include "compiler/schedule/primitive/compute_inline.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status ComputeInline(Program*, const std::string&) { return absl::UnimplementedError("not implemented yet"); }

absl::Status ReverseComputeInline(Program*, const std::string&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

#include "compiler/schedule/primitive/decompose_reduction.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::StatusOr<std::string> DecomposeReduction(Program*, const std::string&, const std::string&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

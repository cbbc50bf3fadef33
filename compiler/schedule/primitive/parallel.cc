#include "compiler/schedule/primitive/loop_kind.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status Parallel(Program*, const std::string&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

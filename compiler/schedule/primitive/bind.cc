#include "compiler/schedule/primitive/loop_kind.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status Bind(Program*, const std::string&, const std::string&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

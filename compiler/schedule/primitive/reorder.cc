#include "compiler/schedule/primitive/reorder.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status Reorder(Program*, const std::vector<std::string>&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

#include "compiler/schedule/primitive/fuse.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::StatusOr<std::string> Fuse(Program*, const std::vector<std::string>&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

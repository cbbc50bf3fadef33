#include "compiler/schedule/primitive/rfactor.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::StatusOr<std::string> RFactor(Program*, const std::string&, int64_t) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

#include "compiler/schedule/primitive/compute_at.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::Status ComputeAt(Program*, const std::string&, const std::string&, bool) { return absl::UnimplementedError("not implemented yet"); }

absl::Status ReverseComputeAt(Program*, const std::string&, const std::string&, bool) { return absl::UnimplementedError("not implemented yet"); }

std::vector<std::string> ComputeLocations(const Program&, const std::string&) { return {}; }

}  // namespace lathe::primitive

#include "compiler/schedule/primitive/cache_read.h"

#include "absl/status/status.h"

namespace lathe::primitive {

absl::StatusOr<std::string> CacheRead(Program*, const std::string&, int64_t, BufferScope, const Layout&) { return absl::UnimplementedError("not implemented yet"); }

}  // namespace lathe::primitive

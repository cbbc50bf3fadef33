#include "compiler/ir/buffer.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe {

const char* BufferScopeName(BufferScope scope) {
  switch (scope) {
    case BufferScope::kGlobal:
      return "global";
    case BufferScope::kLocal:
      return "local";
    case BufferScope::kShared:
      return "shared";
  }
  return "?";
}

absl::StatusOr<BufferScope> ParseBufferScope(const std::string& text) {
  if (text == "global") return BufferScope::kGlobal;
  if (text == "local") return BufferScope::kLocal;
  if (text == "shared") return BufferScope::kShared;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown buffer scope \"", text, "\"; accepted: global, local, shared"));
}

int64_t Buffer::NumElements() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

BufferPtr MakeBuffer(std::string name, DType dtype, std::vector<int64_t> shape,
                     BufferScope scope) {
  auto buffer = std::make_shared<Buffer>();
  buffer->name = std::move(name);
  buffer->dtype = dtype;
  buffer->shape = std::move(shape);
  buffer->scope = scope;
  return buffer;
}

}  // namespace lathe

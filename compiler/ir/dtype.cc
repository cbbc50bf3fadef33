#include "compiler/ir/dtype.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe {

std::string DType::ToString() const {
  switch (code_) {
    case Code::kInt:
      return absl::StrCat("int", bits_);
    case Code::kUInt:
      return absl::StrCat("uint", bits_);
    case Code::kFloat:
      return absl::StrCat("float", bits_);
    case Code::kBool:
      return "bool";
  }
  return "unknown";
}

absl::StatusOr<DType> DType::Parse(const std::string& text) {
  static const struct {
    const char* name;
    DType type;
  } kKnown[] = {
      {"float32", Float32()}, {"f32", Float32()}, {"float16", Float16()},
      {"f16", Float16()},     {"int8", Int8()},   {"i8", Int8()},
      {"int32", Int32()},     {"i32", Int32()},   {"int64", Int64()},
      {"i64", Int64()},       {"bool", Bool()},
  };
  for (const auto& known : kKnown) {
    if (text == known.name) return known.type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype \"", text,
                   "\"; accepted: float32, float16, int8, int32, int64, bool"));
}

}  // namespace lathe

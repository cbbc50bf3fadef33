// Scalar data types of the loop IR.
//
// A DType is a (code, bits) pair. float32 is what workloads use today; the
// type system also admits int8, int32, float16 and bool so that quantized and
// half-precision workloads need no new plumbing. Index arithmetic is int64.
// Tests: tests/compiler/ir/expr_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace lathe {

class DType {
 public:
  enum class Code : uint8_t { kInt, kUInt, kFloat, kBool };

  constexpr DType() : code_(Code::kFloat), bits_(32) {}
  constexpr DType(Code code, int bits) : code_(code), bits_(bits) {}

  static constexpr DType Float32() { return {Code::kFloat, 32}; }
  static constexpr DType Float16() { return {Code::kFloat, 16}; }
  static constexpr DType Int8() { return {Code::kInt, 8}; }
  static constexpr DType Int32() { return {Code::kInt, 32}; }
  static constexpr DType Int64() { return {Code::kInt, 64}; }
  static constexpr DType Bool() { return {Code::kBool, 1}; }
  // The type of loop variables, block iteration variables and indices.
  static constexpr DType Index() { return Int64(); }

  Code code() const { return code_; }
  int bits() const { return bits_; }
  int bytes() const { return (bits_ + 7) / 8; }
  bool is_float() const { return code_ == Code::kFloat; }
  bool is_int() const { return code_ == Code::kInt || code_ == Code::kUInt; }
  bool is_bool() const { return code_ == Code::kBool; }

  // "float32", "int8", "bool", ...
  std::string ToString() const;
  // Inverse of ToString; also accepts the short forms "f32", "i32", "f16".
  static absl::StatusOr<DType> Parse(const std::string& text);

  friend bool operator==(DType a, DType b) {
    return a.code_ == b.code_ && a.bits_ == b.bits_;
  }
  friend bool operator!=(DType a, DType b) { return !(a == b); }

 private:
  Code code_;
  int bits_;
};

}  // namespace lathe

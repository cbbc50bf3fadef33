#include "compiler/workload/registry.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/untrusted_text.h"
#include "compiler/workload/ops/ops.h"

namespace lathe {

const char* ParamKindDescription(ParamKind kind) {
  switch (kind) {
    case ParamKind::kDim:
      return "positive integer";
    case ParamKind::kNonNegative:
      return "non-negative integer";
    case ParamKind::kFlag:
      return "0 or 1";
    case ParamKind::kDType:
      return "float32 only, for now";
  }
  return "?";
}

int64_t OpParams::operator[](const std::string& name) const {
  auto it = ints.find(name);
  LATHE_CHECK(it != ints.end(), "operator parameter ", name,
              " is not declared");
  return it->second;
}

const ParamSpec* OperatorDef::FindParam(absl::string_view param) const {
  for (const ParamSpec& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

std::string OperatorDef::ParamNames() const {
  return absl::StrJoin(params, ", ", [](std::string* out, const ParamSpec& p) {
    out->append(p.name);
  });
}

const std::vector<OperatorDef>& Operators() {
  static const std::vector<OperatorDef>* operators = [] {
    auto* all = new std::vector<OperatorDef>{
        ops::MakeMatmulOp(),     ops::MakeBatchMatmulOp(),
        ops::MakeDenseOp(),      ops::MakeConv2dNchwOp(),
        ops::MakeConv2dNhwcOp(), ops::MakeMaxPool2dOp(),
        ops::MakeAvgPool2dOp(),  ops::MakeSoftmaxOp(),
        ops::MakeAddOp(),        ops::MakeReluOp(),
    };
    std::sort(all->begin(), all->end(),
              [](const OperatorDef& a, const OperatorDef& b) {
                return a.name < b.name;
              });
    return all;
  }();
  return *operators;
}

const OperatorDef* FindOperator(absl::string_view name) {
  for (const OperatorDef& op : Operators()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string OperatorNames() {
  return absl::StrJoin(
      Operators(), ", ",
      [](std::string* out, const OperatorDef& op) { out->append(op.name); });
}

namespace {

absl::Status BadInteger(const OperatorDef& op, const ParamSpec& param,
                        absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat(op.name, ": ", param.name, " must be ",
                   param.kind == ParamKind::kFlag ? "" : "a ",
                   ParamKindDescription(param.kind), ", got \"",
                   EscapedPrefix(value), "\""));
}

}  // namespace

absl::StatusOr<std::string> CanonicalParamValue(const OperatorDef& op,
                                                const ParamSpec& param,
                                                absl::string_view value) {
  if (param.kind == ParamKind::kDType) {
    absl::StatusOr<DType> dtype = DType::Parse(std::string(value));
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op.name, ": unknown dtype \"", value, "\"; accepted: float32"));
    }
    if (*dtype != DType::Float32()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.name, ": dtype ", dtype->ToString(),
                       " is not supported yet; accepted: float32"));
    }
    return dtype->ToString();
  }
  // Integers: an optional sign and decimal digits, nothing else ("1.5",
  // "1e3", "0x10" and "" are rejected).
  absl::string_view digits = value;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return absl::ascii_isdigit(c);
      })) {
    return BadInteger(op, param, value);
  }
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  int64_t magnitude = 0;
  // More than 18 digits cannot be a value we accept (and might overflow).
  if (digits.size() > 18 || !absl::SimpleAtoi(digits, &magnitude)) {
    magnitude = kMaxParamValue + 1;
  }
  int64_t v = negative ? -magnitude : magnitude;
  if (v < 0 || (v == 0 && param.kind == ParamKind::kDim)) {
    return BadInteger(op, param, value);
  }
  if (param.kind == ParamKind::kFlag && v > 1) {
    return BadInteger(op, param, value);
  }
  if (v > kMaxParamValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(op.name, ": ", param.name, "=", value,
                     " is too large (at most ", kMaxParamValue, ")"));
  }
  return absl::StrCat(v);
}

OpParams OpParamsFromCanonical(
    const OperatorDef& op, const std::map<std::string, std::string>& params) {
  OpParams result;
  for (const ParamSpec& p : op.params) {
    auto it = params.find(p.name);
    LATHE_CHECK(it != params.end(), op.name, ": parameter ", p.name,
                " missing from canonical parameters");
    if (p.kind == ParamKind::kDType) {
      absl::StatusOr<DType> dtype = DType::Parse(it->second);
      LATHE_CHECK(dtype.ok(), op.name, ": non-canonical dtype ", it->second);
      result.dtype = *dtype;
    } else {
      int64_t v = 0;
      LATHE_CHECK(absl::SimpleAtoi(it->second, &v), op.name,
                  ": non-canonical value of ", p.name, ": ", it->second);
      result.ints[p.name] = v;
    }
  }
  return result;
}

absl::StatusOr<int64_t> CheckedNumElements(const std::string& what,
                                           const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (extent <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " [", absl::StrJoin(shape, ", "), "] has an empty dimension"));
    }
    // n <= kMaxTensorElements and extent fits in int64, so compare by
    // division to stay clear of overflow.
    if (extent > kMaxTensorElements / n) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " [", absl::StrJoin(shape, ", "), "] is too large (more than ",
          kMaxTensorElements, " elements)"));
    }
    n *= extent;
  }
  return n;
}

namespace ops {

ParamSpec DTypeParam() {
  return {"dtype", ParamKind::kDType, "float32", "element type"};
}

}  // namespace ops
}  // namespace lathe

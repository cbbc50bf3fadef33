#include "compiler/workload/custom_ast.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe {

std::string PlainVariable(const AffineIndex& index) {
  if (index.constant != 0 || index.coefs.size() != 1) return "";
  const auto& [var, coef] = *index.coefs.begin();
  return coef == 1 ? var : "";
}

std::string AffineIndex::ToString() const {
  std::string out;
  for (const auto& [var, coef] : coefs) {
    if (coef < 0) {
      out += "-";
    } else if (!out.empty()) {
      out += "+";
    }
    int64_t magnitude = coef < 0 ? -coef : coef;
    if (magnitude != 1) absl::StrAppend(&out, magnitude, "*");
    out += var;
  }
  if (constant != 0 || out.empty()) {
    if (constant >= 0 && !out.empty()) out += "+";
    absl::StrAppend(&out, constant);
  }
  return out;
}

bool ParsedExpr::operator==(const ParsedExpr& other) const {
  // Literals compare by bits so that the comparison is an equivalence
  // (the parser never produces NaN, but be exact anyway).
  return kind == other.kind &&
         (kind != ParsedExprKind::kLiteral ||
          std::memcmp(&literal, &other.literal, sizeof(double)) == 0) &&
         name == other.name && indices == other.indices &&
         padded == other.padded && operands == other.operands;
}

bool InputDeclaration::operator==(const InputDeclaration& other) const {
  return name == other.name && shape == other.shape &&
         std::memcmp(&pad_value, &other.pad_value, sizeof(double)) == 0 &&
         constant == other.constant;
}

bool ParsedStatement::operator==(const ParsedStatement& other) const {
  return output == other.output && output_indices == other.output_indices &&
         assign == other.assign && value == other.value;
}

const char* AssignKindText(AssignKind kind) {
  switch (kind) {
    case AssignKind::kAssign:
      return "=";
    case AssignKind::kSum:
      return "+=";
    case AssignKind::kMax:
      return "max=";
    case AssignKind::kMin:
      return "min=";
  }
  return "?";
}

namespace {

// The shortest decimal text that reads back as exactly `value`.
std::string LiteralText(double value) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  std::string text = buf;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

int Precedence(ParsedExprKind kind) {
  switch (kind) {
    case ParsedExprKind::kAdd:
    case ParsedExprKind::kSub:
      return 1;
    case ParsedExprKind::kMul:
    case ParsedExprKind::kDiv:
      return 2;
    case ParsedExprKind::kNeg:
      return 3;
    default:
      return 4;
  }
}

void Print(const ParsedExpr& e, std::string* out);

void PrintOperand(const ParsedExpr& e, bool parenthesize, std::string* out) {
  if (parenthesize) out->append("(");
  Print(e, out);
  if (parenthesize) out->append(")");
}

void Print(const ParsedExpr& e, std::string* out) {
  switch (e.kind) {
    case ParsedExprKind::kLiteral:
      out->append(LiteralText(e.literal));
      return;
    case ParsedExprKind::kAccess:
      absl::StrAppend(out, e.name, e.padded ? "?[" : "[",
                      absl::StrJoin(e.indices, ",",
                                    [](std::string* o, const AffineIndex& i) {
                                      o->append(i.ToString());
                                    }),
                      "]");
      return;
    case ParsedExprKind::kNeg:
      out->append("-");
      PrintOperand(e.operands[0], Precedence(e.operands[0].kind) < 3, out);
      return;
    case ParsedExprKind::kCall:
      absl::StrAppend(out, e.name, "(");
      for (size_t i = 0; i < e.operands.size(); ++i) {
        if (i > 0) out->append(", ");
        Print(e.operands[i], out);
      }
      out->append(")");
      return;
    default: {
      const int p = Precedence(e.kind);
      static const char* kOps[] = {" + ", " - ", " * ", " / "};
      const char* op = kOps[static_cast<int>(e.kind) -
                            static_cast<int>(ParsedExprKind::kAdd)];
      PrintOperand(e.operands[0], Precedence(e.operands[0].kind) < p, out);
      out->append(op);
      PrintOperand(e.operands[1], Precedence(e.operands[1].kind) <= p, out);
      return;
    }
  }
}

}  // namespace

std::string PrintParsedExpr(const ParsedExpr& expr) {
  std::string out;
  Print(expr, &out);
  return out;
}

std::string PrintParsedStatement(const ParsedStatement& s) {
  return absl::StrCat(s.output, "[", absl::StrJoin(s.output_indices, ","), "] ",
                      AssignKindText(s.assign), " ", PrintParsedExpr(s.value));
}

std::string PrintInputDeclaration(const InputDeclaration& d) {
  std::string out =
      absl::StrCat("input ", d.name, "[", absl::StrJoin(d.shape, ","), "]");
  const double zero = 0;
  if (std::memcmp(&d.pad_value, &zero, sizeof(double)) != 0) {
    absl::StrAppend(&out, " pad ", LiteralText(d.pad_value));
  }
  if (d.constant) out += " const";
  return out;
}

std::string PrintParsedDefinition(const ParsedDefinition& definition) {
  std::vector<std::string> parts;
  for (const InputDeclaration& d : definition.inputs) {
    parts.push_back(PrintInputDeclaration(d));
  }
  for (const ParsedStatement& s : definition.statements) {
    parts.push_back(PrintParsedStatement(s));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace lathe

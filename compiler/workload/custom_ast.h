// The syntax tree of custom (einsum-like) workload expressions, and its
// canonical text.
//
//   C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)
//
// A definition is a list of statements; each defines one tensor
// OUT[v,...] from an expression of tensor accesses with affine indices,
// literals, + - * /, unary minus and the functions of kCustomFunctions.
// expr_parser.h builds the tree from text; custom_workload.h checks it
// against the dims and turns it into te tensors; custom_eval.h evaluates it.
//
// The canonical text (PrintParsedDefinition) is fixed by the tree alone, so
// that equal trees print equal: statements joined by "; ", binary operators
// spaced (" + "), minimal parentheses (left-associative; a right operand of
// equal precedence keeps its parentheses), indices without spaces in the
// form 2*i+r-1 (terms sorted by variable name, the constant last),
// literals in their shortest exact decimal form with a ".0" when integral.
// Parsing the canonical text gives the same tree back.
// Tests: tests/compiler/workload/expr_parser_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lathe {

// sum(coefs[v] * v) + constant, over index variables. Coefficients are
// never zero (terms that cancel are removed).
struct AffineIndex {
  std::map<std::string, int64_t> coefs;
  int64_t constant = 0;

  std::string ToString() const;
  bool operator==(const AffineIndex& other) const {
    return coefs == other.coefs && constant == other.constant;
  }
};

enum class ParsedExprKind {
  kLiteral,
  kAccess,
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kCall
};

struct ParsedExpr {
  ParsedExprKind kind = ParsedExprKind::kLiteral;
  double literal = 0;                // kLiteral
  std::string name;                  // kAccess: the tensor; kCall: the function
  std::vector<AffineIndex> indices;  // kAccess
  std::vector<ParsedExpr> operands;  // kNeg: 1; binary: 2; kCall: arguments
  int column = 0;  // 1-based position in the source, for messages

  bool operator==(const ParsedExpr& other) const;  // ignores columns
};

// The functions an expression may call, with their number of arguments.
struct CustomFunction {
  const char* name;
  int arity;
};
inline constexpr CustomFunction kCustomFunctions[] = {
    {"max", 2},  {"min", 2},  {"exp", 1}, {"log", 1},
    {"sqrt", 1}, {"tanh", 1}, {"abs", 1},
};

enum class AssignKind {
  kAssign,  // =     : element-wise; every index on the right is on the left
  kSum,     // +=    : sums over the indices found only on the right
  kMax,     // max=  : the maximum over them
  kMin,     // min=  : the minimum over them
};
const char* AssignKindText(AssignKind kind);  // "=", "+=", "max=", "min="

struct ParsedStatement {
  std::string output;
  std::vector<std::string> output_indices;  // distinct plain variables
  AssignKind assign = AssignKind::kAssign;
  ParsedExpr value;
  int column = 0;

  bool operator==(const ParsedStatement& other) const;
};

struct ParsedDefinition {
  std::vector<ParsedStatement> statements;
};

std::string PrintParsedExpr(const ParsedExpr& expr);
std::string PrintParsedStatement(const ParsedStatement& statement);
std::string PrintParsedDefinition(const ParsedDefinition& definition);

}  // namespace lathe

// The syntax tree of custom (einsum-like) workload expressions, and its
// canonical text.
//
//   C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)
//   input X[1,4,6,6]; input W[8,4,3,3];
//   Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]
//
// A definition is a list of input declarations (a tensor's shape, the
// value its zero-padded reads X?[...] give outside it, 0 unless `pad V`, and
// whether it is a constant: `const`, see InputDeclaration),
// then a list of statements; each statement defines one tensor
// OUT[v,...] from an expression of tensor accesses with affine indices,
// literals, + - * /, unary minus and the functions of kCustomFunctions.
// expr_parser.h builds the tree from text; custom_workload.h checks it
// against the dims and turns it into te tensors; custom_eval.h evaluates it.
//
// The canonical text (PrintParsedDefinition) is fixed by the tree alone, so
// that equal trees print equal: the declarations in their order
// (`input X[1,64,56,56]`, then ` pad V` unless V is +0.0, then ` const`
// for a constant), then the
// statements, all joined by "; ", binary operators spaced (" + "), minimal
// parentheses (left-associative; a right operand of equal precedence keeps
// its parentheses), padded reads as X?[...], indices without spaces in the
// form 2*i+r-1 (terms sorted by variable name, the constant last), literals
// and pad values in their shortest exact decimal form with a ".0" when
// integral. Parsing the canonical text gives the same tree back.
// Tests: tests/compiler/workload/expr_parser_test.cc.
#pragma once

#include <cstddef>
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
  bool padded = false;  // kAccess: X?[...], the pad value outside X
  std::vector<ParsedExpr> operands;  // kNeg: 1; binary: 2; kCall: arguments
  int column = 0;  // 1-based position in the source, for messages

  bool operator==(const ParsedExpr& other) const;  // ignores columns
};

// The functions an expression may call, with their number of arguments:
// the math functions, pow(x, y), select(c, a, b) (a where c != 0, else b;
// only the chosen one is evaluated) and the comparisons lt le gt ge eq
// (a < b, ..., a == b as 1.0, else 0.0).
struct CustomFunction {
  const char* name;
  int arity;
};
inline constexpr CustomFunction kCustomFunctions[] = {
    {"max", 2},  {"min", 2}, {"exp", 1}, {"log", 1}, {"sqrt", 1},
    {"tanh", 1}, {"abs", 1}, {"erf", 1}, {"pow", 2}, {"select", 3},
    {"lt", 2},   {"le", 2},  {"gt", 2},  {"ge", 2},  {"eq", 2},
};

// Bounds of input declarations (extents are bounded by kMaxParamValue and
// the element count by kMaxTensorElements, registry.h).
inline constexpr int kMaxInputDeclarations = 256;
inline constexpr int kMaxDeclaredRank = 8;
// The text of a definition and its statements: limits checked before the
// text is read further, far above what a workload writes.
inline constexpr size_t kMaxCustomExprBytes = size_t{64} << 10;
inline constexpr int kMaxCustomStatements = 128;

// `input NAME[e0,e1,...]` with its pad value: the shape of an input tensor
// and what its padded reads give outside that shape. `const` declares the
// input layout-free: its values are fixed when the kernel is built or
// loaded (a model's weights), not given anew at every call, so a schedule
// may copy it into another layout once, ahead of the calls
// (tuner/space/pack_operand.h, compiler/codegen/prepack_split.h). It is
// part of the canonical text, so a task whose weights are constants has
// another key (and other records) than the same computation whose weights
// arrive at run time.
struct InputDeclaration {
  std::string name;
  std::vector<int64_t> shape;
  double pad_value = 0;
  bool constant = false;
  int column = 0;

  bool operator==(const InputDeclaration& other) const;  // ignores columns
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
  std::vector<InputDeclaration> inputs;
  std::vector<ParsedStatement> statements;

  bool operator==(const ParsedDefinition& other) const {
    return inputs == other.inputs && statements == other.statements;
  }
};

// The variable an index is exactly (coefficient 1, no constant), or "".
std::string PlainVariable(const AffineIndex& index);

// Appends the tensor accesses of an expression tree, in source order, to
// `out`; Expr is ParsedExpr or const ParsedExpr.
template <typename Expr>
void CollectAccesses(Expr& expr, std::vector<Expr*>& out) {
  if (expr.kind == ParsedExprKind::kAccess) out.push_back(&expr);
  for (Expr& operand : expr.operands) CollectAccesses(operand, out);
}

std::string PrintParsedExpr(const ParsedExpr& expr);
std::string PrintParsedStatement(const ParsedStatement& statement);
std::string PrintInputDeclaration(const InputDeclaration& declaration);
std::string PrintParsedDefinition(const ParsedDefinition& definition);

}  // namespace lathe

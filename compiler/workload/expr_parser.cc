#include "compiler/workload/expr_parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/untrusted_text.h"
#include "compiler/workload/registry.h"

namespace lathe {
namespace {

enum class TokenKind { kName, kNumber, kPunct, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int column = 0;  // 1-based
};

std::string Describe(const Token& t) {
  if (t.kind == TokenKind::kEnd) return "end of input";
  return absl::StrCat("'", EscapedPrefix(t.text), "'");
}

absl::Status ErrorAt(int column, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("custom expression, column ", column, ": ", message));
}

absl::StatusOr<std::vector<Token>> Lex(absl::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const int column = static_cast<int>(i) + 1;
    if (absl::ascii_isspace(c)) {
      ++i;
      continue;
    }
    if (absl::ascii_isalpha(c) || c == '_') {
      size_t j = i;
      while (j < text.size() &&
             (absl::ascii_isalnum(text[j]) || text[j] == '_'))
        ++j;
      tokens.push_back(
          {TokenKind::kName, std::string(text.substr(i, j - i)), column});
      i = j;
      continue;
    }
    if (absl::ascii_isdigit(c) ||
        (c == '.' && i + 1 < text.size() && absl::ascii_isdigit(text[i + 1]))) {
      size_t j = i;
      while (j < text.size() && absl::ascii_isdigit(text[j])) ++j;
      if (j < text.size() && text[j] == '.') {
        ++j;
        while (j < text.size() && absl::ascii_isdigit(text[j])) ++j;
      }
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < text.size() && absl::ascii_isdigit(text[k])) {
          while (k < text.size() && absl::ascii_isdigit(text[k])) ++k;
          j = k;
        }
      }
      tokens.push_back(
          {TokenKind::kNumber, std::string(text.substr(i, j - i)), column});
      i = j;
      continue;
    }
    if (c == '+' && i + 1 < text.size() && text[i + 1] == '=') {
      tokens.push_back({TokenKind::kPunct, "+=", column});
      i += 2;
      continue;
    }
    if (absl::string_view("[](),;=+-*/?").find(c) != absl::string_view::npos) {
      tokens.push_back({TokenKind::kPunct, std::string(1, c), column});
      ++i;
      continue;
    }
    return ErrorAt(
        column, absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }
  tokens.push_back({TokenKind::kEnd, "", static_cast<int>(text.size()) + 1});
  return tokens;
}

// Recursive descent over the grammar of expr_parser.h, one method per rule.
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<ParsedDefinition> Definition() {
    ParsedDefinition def;
    while (IsDeclarationStart()) {
      if (def.inputs.size() >= static_cast<size_t>(kMaxInputDeclarations)) {
        return ErrorAt(Peek().column,
                       absl::StrCat("more than ", kMaxInputDeclarations,
                                    " input declarations"));
      }
      absl::StatusOr<InputDeclaration> d = Declaration();
      if (!d.ok()) return d.status();
      def.inputs.push_back(std::move(*d));
      if (absl::Status st =
              Expect(";", absl::StrCat("after the declaration of ",
                                       def.inputs.back().name));
          !st.ok()) {
        return st;
      }
    }
    while (true) {
      if (IsDeclarationStart()) {
        return ErrorAt(Peek().column,
                       absl::StrCat("the declaration of ", Peek(1).text,
                                    " comes after a statement; input "
                                    "declarations come first"));
      }
      if (def.statements.size() >= static_cast<size_t>(kMaxCustomStatements)) {
        return ErrorAt(Peek().column,
                       absl::StrCat("more than kMaxCustomStatements (",
                                    kMaxCustomStatements, ") statements"));
      }
      absl::StatusOr<ParsedStatement> s = Statement();
      if (!s.ok()) return s.status();
      def.statements.push_back(std::move(*s));
      if (IsPunct(";")) {
        Next();
        if (Peek().kind == TokenKind::kEnd) break;  // a trailing ';'
        continue;
      }
      if (Peek().kind == TokenKind::kEnd) break;
      return Expected("';' or the end of the expression");
    }
    return def;
  }

 private:
  // Nesting deeper than this is surely not a workload, and would risk the
  // stack of this recursive parser.
  static constexpr int kMaxDepth = 200;

  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsPunct(absl::string_view p, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kPunct && Peek(ahead).text == p;
  }
  absl::Status Expected(absl::string_view what) const {
    return ErrorAt(Peek().column,
                   absl::StrCat("expected ", what, ", got ", Describe(Peek())));
  }
  absl::Status Expect(absl::string_view punct, absl::string_view context) {
    if (!IsPunct(punct)) {
      return Expected(absl::StrCat("'", punct, "' ", context));
    }
    Next();
    return absl::OkStatus();
  }

  // `input NAME`: a declaration (`input[...]` is a tensor named input).
  bool IsDeclarationStart() const {
    return Peek().kind == TokenKind::kName && Peek().text == "input" &&
           Peek(1).kind == TokenKind::kName;
  }

  absl::StatusOr<InputDeclaration> Declaration() {
    InputDeclaration d;
    d.column = Next().column;  // 'input'
    d.name = Next().text;
    if (absl::Status st = Expect("[", absl::StrCat("after input ", d.name));
        !st.ok()) {
      return st;
    }
    while (true) {
      const Token& t = Peek();
      if (t.kind != TokenKind::kNumber ||
          t.text.find_first_not_of("0123456789") != std::string::npos) {
        return Expected(
            absl::StrCat("a positive integer extent of input ", d.name));
      }
      int64_t v = 0;
      if (t.text.size() > 12 || !absl::SimpleAtoi(t.text, &v) ||
          v > kMaxParamValue || v < 1) {
        return ErrorAt(t.column,
                       absl::StrCat("extent ", t.text, " of input ", d.name,
                                    " must be in [1, ", kMaxParamValue, "]"));
      }
      if (d.shape.size() >= static_cast<size_t>(kMaxDeclaredRank)) {
        return ErrorAt(t.column,
                       absl::StrCat("input ", d.name, " has more than ",
                                    kMaxDeclaredRank, " dimensions"));
      }
      Next();
      d.shape.push_back(v);
      if (IsPunct(",")) {
        Next();
        continue;
      }
      if (IsPunct("]")) {
        Next();
        break;
      }
      return Expected(
          absl::StrCat("',' or ']' after an extent of input ", d.name));
    }
    if (Peek().kind == TokenKind::kName && Peek().text == "pad") {
      Next();
      const int column = Peek().column;
      const bool negative = IsPunct("-");
      if (negative) Next();
      if (Peek().kind != TokenKind::kNumber) {
        return Expected(absl::StrCat("the pad value of input ", d.name));
      }
      const std::string text = (negative ? "-" : "") + Next().text;
      const double v = std::strtod(text.c_str(), nullptr);
      if (!(std::fabs(v) <= std::numeric_limits<float>::max())) {
        return ErrorAt(column,
                       absl::StrCat("pad value ", text, " of input ", d.name,
                                    " is outside the range of float32"));
      }
      d.pad_value = v;
    }
    if (Peek().kind == TokenKind::kName && Peek().text == "const") {
      Next();
      d.constant = true;
    }
    return d;
  }

  absl::StatusOr<ParsedStatement> Statement() {
    ParsedStatement s;
    s.column = Peek().column;
    if (Peek().kind != TokenKind::kName) {
      return Expected("the name of the tensor a statement defines");
    }
    s.output = Next().text;
    if (absl::Status st = Expect("[", absl::StrCat("after ", s.output));
        !st.ok()) {
      return st;
    }
    while (true) {
      if (Peek().kind != TokenKind::kName) {
        return Expected(absl::StrCat("an index variable of ", s.output,
                                     " (the left side takes plain variables)"));
      }
      s.output_indices.push_back(Next().text);
      if (IsPunct(",")) {
        Next();
        continue;
      }
      if (IsPunct("]")) {
        Next();
        break;
      }
      return Expected(absl::StrCat("',' or ']' after an index of ", s.output));
    }
    if (IsPunct("=")) {
      s.assign = AssignKind::kAssign;
      Next();
    } else if (IsPunct("+=")) {
      s.assign = AssignKind::kSum;
      Next();
    } else if (Peek().kind == TokenKind::kName &&
               (Peek().text == "max" || Peek().text == "min") &&
               IsPunct("=", 1)) {
      s.assign = Peek().text == "max" ? AssignKind::kMax : AssignKind::kMin;
      Next();
      Next();
    } else {
      return Expected("'=', '+=', 'max=' or 'min='");
    }
    absl::StatusOr<ParsedExpr> value = Expression(0);
    if (!value.ok()) return value.status();
    s.value = std::move(*value);
    return s;
  }

  static ParsedExpr Binary(ParsedExprKind kind, ParsedExpr a, ParsedExpr b,
                           int column) {
    ParsedExpr e;
    e.kind = kind;
    e.column = column;
    e.operands.push_back(std::move(a));
    e.operands.push_back(std::move(b));
    return e;
  }

  absl::StatusOr<ParsedExpr> Expression(int depth) {
    if (depth > kMaxDepth) {
      return ErrorAt(
          Peek().column,
          absl::StrCat("expression nested deeper than ", kMaxDepth, " levels"));
    }
    absl::StatusOr<ParsedExpr> lhs = Term(depth);
    if (!lhs.ok()) return lhs;
    while (IsPunct("+") || IsPunct("-")) {
      const Token op = Next();
      absl::StatusOr<ParsedExpr> rhs = Term(depth);
      if (!rhs.ok()) return rhs;
      lhs = Binary(op.text == "+" ? ParsedExprKind::kAdd : ParsedExprKind::kSub,
                   std::move(*lhs), std::move(*rhs), op.column);
    }
    return lhs;
  }

  absl::StatusOr<ParsedExpr> Term(int depth) {
    absl::StatusOr<ParsedExpr> lhs = Unary(depth);
    if (!lhs.ok()) return lhs;
    while (IsPunct("*") || IsPunct("/")) {
      const Token op = Next();
      absl::StatusOr<ParsedExpr> rhs = Unary(depth);
      if (!rhs.ok()) return rhs;
      lhs = Binary(op.text == "*" ? ParsedExprKind::kMul : ParsedExprKind::kDiv,
                   std::move(*lhs), std::move(*rhs), op.column);
    }
    return lhs;
  }

  absl::StatusOr<ParsedExpr> Unary(int depth) {
    if (IsPunct("-")) {
      if (depth > kMaxDepth) {
        return ErrorAt(Peek().column, "too many unary minus signs in a row");
      }
      ParsedExpr e;
      e.kind = ParsedExprKind::kNeg;
      e.column = Next().column;
      absl::StatusOr<ParsedExpr> operand = Unary(depth + 1);
      if (!operand.ok()) return operand;
      e.operands.push_back(std::move(*operand));
      return e;
    }
    return Primary(depth);
  }

  absl::StatusOr<ParsedExpr> Primary(int depth) {
    const Token& t = Peek();
    ParsedExpr e;
    e.column = t.column;
    if (t.kind == TokenKind::kNumber) {
      errno = 0;
      const double v = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(v)) {
        return ErrorAt(t.column,
                       absl::StrCat("number ", t.text, " is out of range"));
      }
      Next();
      e.kind = ParsedExprKind::kLiteral;
      e.literal = v;
      return e;
    }
    if (IsPunct("(")) {
      Next();
      absl::StatusOr<ParsedExpr> inner = Expression(depth + 1);
      if (!inner.ok()) return inner;
      if (absl::Status st = Expect(")", "to close the parenthesis"); !st.ok())
        return st;
      return inner;
    }
    if (t.kind != TokenKind::kName) {
      return Expected("a number, a tensor access, a function call or '('");
    }
    e.name = Next().text;
    if (IsPunct("(")) return Call(std::move(e), depth);
    if (IsPunct("?")) {
      e.padded = true;
      Next();
      if (!IsPunct("[")) {
        return Expected(absl::StrCat("'[' after ", e.name, "?"));
      }
    }
    if (!IsPunct("[")) {
      return Expected(absl::StrCat("'[' after tensor ", e.name,
                                   " (or '(' for a function call)"));
    }
    Next();
    e.kind = ParsedExprKind::kAccess;
    while (true) {
      absl::StatusOr<AffineIndex> index = Index(e.name);
      if (!index.ok()) return index.status();
      e.indices.push_back(std::move(*index));
      if (IsPunct(",")) {
        Next();
        continue;
      }
      if (IsPunct("]")) {
        Next();
        return e;
      }
      return Expected(absl::StrCat("',' or ']' after an index of ", e.name));
    }
  }

  absl::StatusOr<ParsedExpr> Call(ParsedExpr e, int depth) {
    e.kind = ParsedExprKind::kCall;
    const CustomFunction* function = nullptr;
    for (const CustomFunction& f : kCustomFunctions) {
      if (e.name == f.name) function = &f;
    }
    if (function == nullptr) {
      std::vector<std::string> names;
      for (const CustomFunction& f : kCustomFunctions) names.push_back(f.name);
      return ErrorAt(e.column,
                     absl::StrCat("unknown function ", e.name,
                                  "; accepted: ", absl::StrJoin(names, ", ")));
    }
    Next();  // '('
    while (true) {
      absl::StatusOr<ParsedExpr> arg = Expression(depth + 1);
      if (!arg.ok()) return arg;
      e.operands.push_back(std::move(*arg));
      if (IsPunct(",")) {
        Next();
        continue;
      }
      if (IsPunct(")")) {
        Next();
        break;
      }
      return Expected(absl::StrCat("',' or ')' in the arguments of ", e.name));
    }
    if (static_cast<int>(e.operands.size()) != function->arity) {
      return ErrorAt(e.column,
                     absl::StrCat(e.name, " takes ", function->arity,
                                  " argument", function->arity == 1 ? "" : "s",
                                  ", got ", e.operands.size()));
    }
    return e;
  }

  // One affine index: terms added into coefficients as they come.
  absl::StatusOr<AffineIndex> Index(const std::string& tensor) {
    AffineIndex index;
    bool first = true;
    while (true) {
      int64_t sign = 1;
      if (IsPunct("-")) {
        sign = -1;
        Next();
      } else if (!first) {
        if (!IsPunct("+")) break;
        Next();
      }
      first = false;
      int64_t coef = 1;
      std::string var;
      if (Peek().kind == TokenKind::kNumber) {
        absl::StatusOr<int64_t> n = Integer(tensor);
        if (!n.ok()) return n.status();
        coef = *n;
        if (IsPunct("*")) {
          Next();
          if (Peek().kind != TokenKind::kName) {
            return Expected(absl::StrCat(
                "an index variable after '*' in an index of ", tensor));
          }
          var = Next().text;
        }
      } else if (Peek().kind == TokenKind::kName) {
        var = Next().text;
        if (IsPunct("*")) {
          Next();
          absl::StatusOr<int64_t> n = Integer(tensor);
          if (!n.ok()) return n.status();
          coef = *n;
        }
      } else {
        return Expected(absl::StrCat(
            "an index variable or an integer in an index of ", tensor));
      }
      // Values are at most 2^31 and a source text is short, so these sums
      // stay far from overflow.
      if (var.empty()) {
        index.constant += sign * coef;
      } else if ((index.coefs[var] += sign * coef) == 0) {
        index.coefs.erase(var);
      }
    }
    return index;
  }

  absl::StatusOr<int64_t> Integer(const std::string& tensor) {
    const Token& t = Peek();
    int64_t v = 0;
    if (t.text.find_first_not_of("0123456789") != std::string::npos) {
      return Expected(absl::StrCat("an integer in an index of ", tensor));
    }
    if (t.text.size() > 12 || !absl::SimpleAtoi(t.text, &v) ||
        v > kMaxParamValue) {
      return ErrorAt(
          t.column,
          absl::StrCat("integer ", t.text, " in an index of ", tensor,
                       " is too large (at most ", kMaxParamValue, ")"));
    }
    Next();
    return v;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

// Bounds that keep every recursive walk of the tree (printing, lowering,
// evaluation, the IR's own passes) far from the stack's end: no workload
// comes near them.
constexpr size_t kMaxTokens = 4096;
constexpr int kMaxTreeDepth = 512;

int TreeDepth(const ParsedExpr& e) {
  int depth = 0;
  for (const ParsedExpr& operand : e.operands) {
    depth = std::max(depth, TreeDepth(operand));
  }
  return depth + 1;
}

}  // namespace

absl::StatusOr<ParsedDefinition> ParseCustomExpr(absl::string_view text) {
  if (text.size() > kMaxCustomExprBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom expression: ", text.size(), " bytes, more than ",
                     "kMaxCustomExprBytes (", kMaxCustomExprBytes, ")"));
  }
  absl::StatusOr<std::vector<Token>> tokens = Lex(text);
  if (!tokens.ok()) return tokens.status();
  if (tokens->size() == 1) {
    return ErrorAt(1,
                   "expected a statement such as C[i,j] += A[i,k] * B[k,j], "
                   "got end of input");
  }
  if (tokens->size() > kMaxTokens) {
    return ErrorAt((*tokens)[kMaxTokens].column,
                   absl::StrCat("expression too long (more than ", kMaxTokens,
                                " tokens)"));
  }
  absl::StatusOr<ParsedDefinition> def =
      Parser(std::move(*tokens)).Definition();
  if (!def.ok()) return def;
  for (const ParsedStatement& s : def->statements) {
    if (TreeDepth(s.value) > kMaxTreeDepth) {
      return ErrorAt(s.column, absl::StrCat("the expression defining ",
                                            s.output, " nests deeper than ",
                                            kMaxTreeDepth, " levels"));
    }
  }
  return def;
}

}  // namespace lathe

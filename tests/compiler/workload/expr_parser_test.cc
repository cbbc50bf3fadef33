#include "compiler/workload/expr_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace lathe {
namespace {

using ::testing::HasSubstr;

// The canonical text of a definition that must parse.
std::string Canonical(const std::string& text) {
  absl::StatusOr<ParsedDefinition> d = ParseCustomExpr(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status();
  if (!d.ok()) return "";
  // Parsing the canonical text gives the same tree back.
  const std::string printed = PrintParsedDefinition(*d);
  absl::StatusOr<ParsedDefinition> again = ParseCustomExpr(printed);
  EXPECT_TRUE(again.ok()) << printed << ": " << again.status();
  if (again.ok()) {
    EXPECT_EQ(again->statements, d->statements) << printed;
    EXPECT_EQ(*again, *d) << printed;
    EXPECT_EQ(PrintParsedDefinition(*again), printed);
  }
  return printed;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<ParsedDefinition> d = ParseCustomExpr(text);
  EXPECT_FALSE(d.ok()) << text << " was accepted";
  if (d.ok()) return "";
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(d.status().message());
}

TEST(ExprParser, ParsesMatmul) {
  ParsedDefinition d = *ParseCustomExpr("C[i,j] += A[i,k] * B[k,j]");
  ASSERT_EQ(d.statements.size(), 1u);
  const ParsedStatement& s = d.statements[0];
  EXPECT_EQ(s.output, "C");
  EXPECT_EQ(s.output_indices, (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(s.assign, AssignKind::kSum);
  ASSERT_EQ(s.value.kind, ParsedExprKind::kMul);
  const ParsedExpr& a = s.value.operands[0];
  EXPECT_EQ(a.kind, ParsedExprKind::kAccess);
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.column, 11);
  ASSERT_EQ(a.indices.size(), 2u);
  EXPECT_EQ(a.indices[1].coefs, (std::map<std::string, int64_t>{{"k", 1}}));
  EXPECT_EQ(s.value.operands[1].name, "B");
}

TEST(ExprParser, AssignmentKinds) {
  EXPECT_EQ(ParseCustomExpr("Y[i] = X[i]")->statements[0].assign,
            AssignKind::kAssign);
  EXPECT_EQ(ParseCustomExpr("Y[i] max= X[i,k]")->statements[0].assign,
            AssignKind::kMax);
  EXPECT_EQ(ParseCustomExpr("Y[i] min = X[i,k]")->statements[0].assign,
            AssignKind::kMin);
  // `max` is still a function on the right side.
  EXPECT_EQ(Canonical("Y[i] max= max(X[i,k], 0)"),
            "Y[i] max= max(X[i,k], 0.0)");
}

TEST(ExprParser, CanonicalTextIsNormalized) {
  EXPECT_EQ(Canonical("C[i,j]+=A[i,k]*B[k,j]"), "C[i,j] += A[i,k] * B[k,j]");
  EXPECT_EQ(Canonical("  C [ i , j ]  +=  A[ i,k ]*B[k , j];"),
            "C[i,j] += A[i,k] * B[k,j]");
  EXPECT_EQ(Canonical("C[i,j] += A[i,k]*B[k,j]; D[i,j] = max(C[i,j], 0)"),
            "C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0.0)");
}

TEST(ExprParser, ParenthesesFollowTheTree) {
  EXPECT_EQ(Canonical("Y[i] = ((A[i] - B[i]) - C[i])"),
            "Y[i] = A[i] - B[i] - C[i]");
  EXPECT_EQ(Canonical("Y[i] = A[i] - (B[i] - C[i])"),
            "Y[i] = A[i] - (B[i] - C[i])");
  EXPECT_EQ(Canonical("Y[i] = A[i] + (B[i] + C[i])"),
            "Y[i] = A[i] + (B[i] + C[i])");
  EXPECT_EQ(Canonical("Y[i] = A[i] + B[i] * C[i]"),
            "Y[i] = A[i] + B[i] * C[i]");
  EXPECT_EQ(Canonical("Y[i] = (A[i] + B[i]) * C[i]"),
            "Y[i] = (A[i] + B[i]) * C[i]");
  EXPECT_EQ(Canonical("Y[i] = A[i] / (B[i] * C[i])"),
            "Y[i] = A[i] / (B[i] * C[i])");
  EXPECT_EQ(Canonical("Y[i] = -(A[i] + 1)"), "Y[i] = -(A[i] + 1.0)");
  EXPECT_EQ(Canonical("Y[i] = - - A[i] * -2"), "Y[i] = --A[i] * -2.0");
  EXPECT_EQ(Canonical("Y[i] = exp(-A[i]) / (1 + exp(-A[i]))"),
            "Y[i] = exp(-A[i]) / (1.0 + exp(-A[i]))");
}

TEST(ExprParser, LiteralsPrintExactlyAndShort) {
  EXPECT_EQ(Canonical("Y[i] = A[i] * 0"), "Y[i] = A[i] * 0.0");
  EXPECT_EQ(Canonical("Y[i] = A[i] * 1.50"), "Y[i] = A[i] * 1.5");
  EXPECT_EQ(Canonical("Y[i] = A[i] * .1"), "Y[i] = A[i] * 0.1");
  EXPECT_EQ(Canonical("Y[i] = A[i] * 1e-3"), "Y[i] = A[i] * 0.001");
  EXPECT_EQ(Canonical("Y[i] = A[i] * 2.5E+20"), "Y[i] = A[i] * 2.5e+20");
  EXPECT_EQ(Canonical("Y[i] = A[i] * 0.30000000000000004"),
            "Y[i] = A[i] * 0.30000000000000004");
}

TEST(ExprParser, AffineIndicesAreCombinedAndSorted) {
  EXPECT_EQ(Canonical("Y[p] += X[p*2+r] * W[r]"), "Y[p] += X[2*p+r] * W[r]");
  EXPECT_EQ(Canonical("Y[i] += X[k+i] * W[k]"), "Y[i] += X[i+k] * W[k]");
  EXPECT_EQ(Canonical("Y[i] = X[i+1-1+i*2]"), "Y[i] = X[3*i]");
  EXPECT_EQ(Canonical("Y[i] = X[i - i + 4]"), "Y[i] = X[4]");
  EXPECT_EQ(Canonical("Y[i] = X[-i + 7]"), "Y[i] = X[-i+7]");
  EXPECT_EQ(Canonical("Y[i] = X[0]"), "Y[i] = X[0]");
  EXPECT_EQ(Canonical("Y[i] = X[3 * i - 2]"), "Y[i] = X[3*i-2]");
}

TEST(ExprParserErrors, NameTheColumnAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf(""),
            "custom expression, column 1: expected a statement such as "
            "C[i,j] += A[i,k] * B[k,j], got end of input");
  EXPECT_EQ(ErrorOf("C[i,j] += A[i,k] *"),
            "custom expression, column 19: expected a number, a tensor access, "
            "a function call or '(', got end of input");
  EXPECT_EQ(ErrorOf("C[i j] = A[i]"),
            "custom expression, column 5: expected ',' or ']' after an index "
            "of C, got 'j'");
  EXPECT_EQ(ErrorOf("C[i] := A[i]"),
            "custom expression, column 6: unexpected character ':'");
  EXPECT_EQ(ErrorOf("C[i] == A[i]"),
            "custom expression, column 7: expected a number, a tensor access, "
            "a function call or '(', got '='");
  EXPECT_EQ(ErrorOf("C[i] *= A[i]"),
            "custom expression, column 6: expected '=', '+=', 'max=' or "
            "'min=', got '*'");
  EXPECT_EQ(ErrorOf("C[i] = A"),
            "custom expression, column 9: expected '[' after tensor A (or '(' "
            "for a function call), got end of input");
  EXPECT_EQ(ErrorOf("C[i] = (A[i]"),
            "custom expression, column 13: expected ')' to close the "
            "parenthesis, got end of input");
  EXPECT_EQ(ErrorOf("C[2*i] = A[i]"),
            "custom expression, column 3: expected an index variable of C (the "
            "left side takes plain variables), got '2'");
  EXPECT_EQ(ErrorOf("C[i] = A[i] B[i]"),
            "custom expression, column 13: expected ';' or the end of the "
            "expression, got 'B'");
  EXPECT_EQ(ErrorOf("[i] = A[i]"),
            "custom expression, column 1: expected the name of the tensor a "
            "statement defines, got '['");
  EXPECT_EQ(ErrorOf("C[i] = A[i];;"),
            "custom expression, column 13: expected the name of the tensor a "
            "statement defines, got ';'");
}

TEST(ExprParserErrors, IndicesMustBeAffine) {
  EXPECT_EQ(ErrorOf("C[i] = A[1.5*i]"),
            "custom expression, column 10: expected an integer in an index of "
            "A, got '1.5'");
  EXPECT_EQ(ErrorOf("C[i] = A[i*j]"),
            "custom expression, column 12: expected an integer in an index of "
            "A, got 'j'");
  EXPECT_EQ(ErrorOf("C[i] = A[(i)]"),
            "custom expression, column 10: expected an index variable or an "
            "integer in an index of A, got '('");
  EXPECT_THAT(ErrorOf("C[i] = A[i+99999999999]"),
              HasSubstr("integer 99999999999 in an index of A is too large"));
}

TEST(ExprParserErrors, Functions) {
  EXPECT_EQ(ErrorOf("C[i] = foo(A[i])"),
            "custom expression, column 8: unknown function foo; accepted: max, "
            "min, exp, log, sqrt, tanh, abs, erf, pow, select, lt, le, gt, ge, "
            "eq");
  EXPECT_EQ(ErrorOf("C[i] = max(A[i])"),
            "custom expression, column 8: max takes 2 arguments, got 1");
  EXPECT_EQ(ErrorOf("C[i] = exp(A[i], 1)"),
            "custom expression, column 8: exp takes 1 argument, got 2");
  EXPECT_EQ(ErrorOf("C[i] = exp(A[i] 1)"),
            "custom expression, column 17: expected ',' or ')' in the "
            "arguments of exp, got '1'");
}

TEST(ExprParser, InputDeclarationsComeFirstWithTheirPadValues) {
  ParsedDefinition d = *ParseCustomExpr(
      "input X[1,64,56,56]; input M[1,3,7,7] pad -3.4028234663852886e+38;"
      "Y[n,c,h,w] = X?[n,c,h-1,w+2] + M[n,0,h,w]");
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[0].name, "X");
  EXPECT_EQ(d.inputs[0].shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_EQ(d.inputs[0].pad_value, 0.0);
  EXPECT_EQ(d.inputs[0].column, 1);
  EXPECT_EQ(d.inputs[1].name, "M");
  EXPECT_EQ(d.inputs[1].pad_value, -3.4028234663852886e+38);
  ASSERT_EQ(d.statements.size(), 1u);
  const ParsedExpr& x = d.statements[0].value.operands[0];
  EXPECT_EQ(x.name, "X");
  EXPECT_TRUE(x.padded);
  EXPECT_FALSE(d.statements[0].value.operands[1].padded);
  // A padded read differs from a plain one.
  EXPECT_FALSE(*ParseCustomExpr("Y[i] = X?[i]") ==
               *ParseCustomExpr("Y[i] = X[i]"));
}

TEST(ExprParser, DeclarationsPrintFirstInTheirOrder) {
  EXPECT_EQ(Canonical("input X[1,4,6,6];input W[8,4,3,3];  input B[8] ;"
                      "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1]*W[k,c,r,s];"
                      "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0)"),
            "input X[1,4,6,6]; input W[8,4,3,3]; input B[8]; "
            "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
            "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0.0)");
  // Pad values: exact and short; 0 is the default and is not printed.
  EXPECT_EQ(Canonical("input X[4] pad -3.4028234663852886e+38; Y[i] = X?[i+1]"),
            "input X[4] pad -3.4028234663852886e+38; Y[i] = X?[i+1]");
  EXPECT_EQ(Canonical("input X[4] pad 0; Y[i] = X[i]"),
            "input X[4]; Y[i] = X[i]");
  EXPECT_EQ(Canonical("input X[4] pad 1.50; Y[i] = X[i]"),
            "input X[4] pad 1.5; Y[i] = X[i]");
  EXPECT_EQ(Canonical("input X[4] pad -2e3; Y[i] = X[i]"),
            "input X[4] pad -2e+03; Y[i] = X[i]");
  EXPECT_EQ(Canonical("input X[4] pad -0; Y[i] = X[i]"),
            "input X[4] pad -0.0; Y[i] = X[i]");
  // A tensor may still be named input (or pad).
  EXPECT_EQ(Canonical("input[i] = pad[i]; Y[i] = input[i]"),
            "input[i] = pad[i]; Y[i] = input[i]");
  EXPECT_EQ(Canonical("input input[3]; Y[i] = input?[i-1]"),
            "input input[3]; Y[i] = input?[i-1]");
}

// `const` marks a layout-free input; it prints after the pad value, round
// trips, and makes another tree than the unmarked declaration.
TEST(ExprParser, ConstDeclarations) {
  EXPECT_EQ(Canonical("input X[4];input W[4,3]  const ; Y[i] += X[i]*W[i,k]"),
            "input X[4]; input W[4,3] const; Y[i] += X[i] * W[i,k]");
  EXPECT_EQ(Canonical("input X[4] pad -1 const; Y[i] = X?[i+1]"),
            "input X[4] pad -1.0 const; Y[i] = X?[i+1]");
  absl::StatusOr<ParsedDefinition> marked =
      ParseCustomExpr("input W[4] const; Y[i] = W[i]");
  absl::StatusOr<ParsedDefinition> unmarked =
      ParseCustomExpr("input W[4]; Y[i] = W[i]");
  ASSERT_TRUE(marked.ok() && unmarked.ok());
  EXPECT_TRUE(marked->inputs[0].constant);
  EXPECT_FALSE(unmarked->inputs[0].constant);
  EXPECT_FALSE(*marked == *unmarked);
  EXPECT_EQ(*ParseCustomExpr(PrintParsedDefinition(*marked)), *marked);
  // `const` belongs after the shape (and pad value) only.
  EXPECT_EQ(ErrorOf("input W const[4]; Y[i] = W[i]"),
            "custom expression, column 9: expected '[' after input W, got "
            "'const'");
  EXPECT_EQ(ErrorOf("input W[4] const pad 1; Y[i] = W?[i]"),
            "custom expression, column 18: expected ';' after the declaration "
            "of W, got 'pad'");
}

TEST(ExprParser, NewFunctions) {
  EXPECT_EQ(Canonical("Y[i] = erf(X[i] * 0.7071067811865476)"),
            "Y[i] = erf(X[i] * 0.7071067811865476)");
  EXPECT_EQ(Canonical("Y[i] = pow(X[i],2)+select(lt(X[i],0), -X[i], X[i])"),
            "Y[i] = pow(X[i], 2.0) + select(lt(X[i], 0.0), -X[i], X[i])");
  EXPECT_EQ(Canonical("Y[i] = le(A[i],B[i]) + gt(A[i],B[i]) + ge(A[i],B[i]) "
                      "+ eq(A[i],B[i])"),
            "Y[i] = le(A[i], B[i]) + gt(A[i], B[i]) + ge(A[i], B[i]) + "
            "eq(A[i], B[i])");
  EXPECT_EQ(ErrorOf("C[i] = select(A[i], 1)"),
            "custom expression, column 8: select takes 3 arguments, got 2");
  EXPECT_EQ(ErrorOf("C[i] = pow(A[i])"),
            "custom expression, column 8: pow takes 2 arguments, got 1");
}

TEST(ExprParserErrors, Declarations) {
  EXPECT_EQ(ErrorOf("input X[4]"),
            "custom expression, column 11: expected ';' after the declaration "
            "of X, got end of input");
  EXPECT_EQ(ErrorOf("input X[4];"),
            "custom expression, column 12: expected the name of the tensor a "
            "statement defines, got end of input");
  EXPECT_EQ(ErrorOf("Y[i] = X[i]; input X[4]"),
            "custom expression, column 14: the declaration of X comes after a "
            "statement; input declarations come first");
  EXPECT_EQ(ErrorOf("input X[4,i]; Y[i] = X[i,0]"),
            "custom expression, column 11: expected a positive integer extent "
            "of input X, got 'i'");
  EXPECT_EQ(ErrorOf("input X[1.5]; Y[i] = X[i]"),
            "custom expression, column 9: expected a positive integer extent "
            "of input X, got '1.5'");
  EXPECT_EQ(ErrorOf("input X[0]; Y[i] = X[i]"),
            "custom expression, column 9: extent 0 of input X must be in [1, "
            "2147483648]");
  EXPECT_EQ(ErrorOf("input X[]; Y[i] = X[i]"),
            "custom expression, column 9: expected a positive integer extent "
            "of input X, got ']'");
  EXPECT_THAT(ErrorOf("input X[99999999999]; Y[i] = X[i]"),
              HasSubstr("extent 99999999999 of input X must be in [1, "));
  EXPECT_EQ(ErrorOf("input X[1,1,1,1,1,1,1,1,1]; Y[i] = X[i,0,0,0,0,0,0,0,0]"),
            "custom expression, column 25: input X has more than 8 "
            "dimensions");
  EXPECT_EQ(ErrorOf("input X[4] pad; Y[i] = X[i]"),
            "custom expression, column 15: expected the pad value of input X, "
            "got ';'");
  EXPECT_EQ(ErrorOf("input X[4] pad 1e39; Y[i] = X[i]"),
            "custom expression, column 16: pad value 1e39 of input X is "
            "outside the range of float32");
  EXPECT_EQ(ErrorOf("input X[4] pad -1e999; Y[i] = X[i]"),
            "custom expression, column 16: pad value -1e999 of input X is "
            "outside the range of float32");
  EXPECT_EQ(ErrorOf("input X[4] zero; Y[i] = X[i]"),
            "custom expression, column 12: expected ';' after the declaration "
            "of X, got 'zero'");
  EXPECT_EQ(ErrorOf("input X[4]; Y[i] = X?(i)"),
            "custom expression, column 22: expected '[' after X?, got '('");
  std::string many;
  for (int n = 0; n <= kMaxInputDeclarations; ++n) {
    many += "input X" + std::to_string(n) + "[1]; ";
  }
  EXPECT_THAT(ErrorOf(many + "Y[i] = X0[i]"),
              HasSubstr("more than 256 input declarations"));
}

TEST(ExprParserErrors, NumbersAndNesting) {
  EXPECT_EQ(ErrorOf("C[i] = A[i] * 1e999"),
            "custom expression, column 15: number 1e999 is out of range");
  std::string deep =
      "C[i] = " + std::string(500, '(') + "A[i]" + std::string(500, ')');
  EXPECT_THAT(ErrorOf(deep), HasSubstr("nested deeper than 200 levels"));
  std::string minus = "C[i] = " + std::string(500, '-') + "A[i]";
  EXPECT_THAT(ErrorOf(minus), HasSubstr("too many unary minus signs"));
  // Long chains make deep trees without any parenthesis.
  std::string chain = "C[i] = A[i]";
  for (int n = 0; n < 600; ++n) chain += " + A[i]";
  EXPECT_EQ(ErrorOf(chain),
            "custom expression, column 1: the expression defining C nests "
            "deeper than 512 levels");
  std::string many = "C[i] = A[i]";
  for (int n = 0; n < 2100; ++n) many += "+1";
  EXPECT_THAT(ErrorOf(many),
              HasSubstr("expression too long (more than 4096 tokens)"));
}

TEST(ExprParserErrors, SizeAndStatementLimits) {
  // The text is refused by its size before it is read further.
  const std::string huge = "C[i] = A[i] + " + std::string(1 << 20, 'x');
  EXPECT_THAT(ErrorOf(huge),
              HasSubstr("more than kMaxCustomExprBytes (65536)"));
  std::string statements;
  for (int k = 1; k <= 200; ++k) {
    absl::StrAppend(&statements, "T", k, "[i] = T", k - 1, "[i]; ");
  }
  EXPECT_THAT(ErrorOf(statements),
              HasSubstr("more than kMaxCustomStatements (128) statements"));
  // A name echoed in an error is bounded and escaped.
  const std::string long_name = "C[i] = A[i] " + std::string(5000, 'y');
  const std::string error = ErrorOf(long_name);
  EXPECT_LT(error.size(), 400u) << error;
  EXPECT_THAT(error, HasSubstr("... (5000 bytes)"));
}

}  // namespace
}  // namespace lathe

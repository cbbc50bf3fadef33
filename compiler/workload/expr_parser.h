// The parser of custom (einsum-like) workload expressions.
//
// Grammar (whitespace is free between tokens):
//
//   definition := (declaration ';')* statement (';' statement)* [';']
//   declaration:= 'input' NAME '[' INT (',' INT)* ']' ['pad' ['-'] NUMBER]
//                 ['const']
//   statement  := NAME '[' VAR (',' VAR)* ']' assign expr
//   assign     := '=' | '+=' | 'max=' | 'min='
//   expr       := term (('+' | '-') term)*
//   term       := unary (('*' | '/') unary)*
//   unary      := '-' unary | primary
//   primary    := NUMBER                        (a float literal: 0, 1.5, 2e-3)
//               | NAME ['?'] '[' index (',' index)* ']'   (a tensor access;
//                                   with '?' a padded read, custom_workload.h)
//               | FUNC '(' expr (',' expr)* ')'     (see kCustomFunctions)
//               | '(' expr ')'
//   index      := ['-'] iterm (('+' | '-') iterm)*   (affine: 2*i+r, i+k-1)
//   iterm      := INT | VAR | INT '*' VAR | VAR '*' INT
//
// Names are [A-Za-z_][A-Za-z0-9_]*; `input` followed by a name starts a
// declaration (a tensor may still be named input). A declaration's extents
// are positive integers up to kMaxParamValue, at most kMaxDeclaredRank of
// them; at most kMaxInputDeclarations declarations; a pad value is finite in
// float32; `const` marks a constant (layout-free) input (custom_ast.h).
// This is syntax only; what the statements mean (which tensors are
// inputs, reductions, shapes) is custom_workload.h's business.
// Tests: tests/compiler/workload/expr_parser_test.cc.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/workload/custom_ast.h"

namespace lathe {

// Parses a definition. Errors (InvalidArgument) give the 1-based column and
// what was expected: `custom expression, column 12: expected ']' or ',' after
// an index, got '+='`.
absl::StatusOr<ParsedDefinition> ParseCustomExpr(absl::string_view text);

}  // namespace lathe

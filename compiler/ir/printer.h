// The readable text form of programs and expressions (`lathe lower`).
//
// The same walker also writes the canonical form that structural equality
// and hashing compare (structural_equal.h): there, variables and buffers are
// named by their order of definition, names of loops and blocks are left
// out, and floats are written exactly (hexadecimal).
// Tests: tests/compiler/ir/printer_test.cc.
#pragma once

#include <string>

#include "compiler/ir/expr.h"
#include "compiler/ir/program.h"

namespace lathe {

std::string PrintExpr(const Expr& expr);
std::string PrintStmt(const StmtNode& stmt);
std::string PrintProgram(const Program& program);

// The canonical form of a program (see structural_equal.h).
std::string CanonicalProgramText(const Program& program);

}  // namespace lathe

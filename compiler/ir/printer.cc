#include "compiler/ir/printer.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/buffer.h"

namespace lathe {
namespace {

// Binding strength of infix operators, for minimal parentheses.
int Precedence(ExprKind kind) {
  switch (kind) {
    case ExprKind::kOr:
      return 1;
    case ExprKind::kAnd:
      return 2;
    case ExprKind::kEq:
    case ExprKind::kNe:
      return 3;
    case ExprKind::kLt:
    case ExprKind::kLe:
    case ExprKind::kGt:
    case ExprKind::kGe:
      return 4;
    case ExprKind::kAdd:
    case ExprKind::kSub:
      return 5;
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      return 6;
    case ExprKind::kNot:
      return 7;
    default:
      return 8;  // atoms and calls
  }
}

const char* InfixSymbol(ExprKind kind) {
  switch (kind) {
    case ExprKind::kAdd:
      return " + ";
    case ExprKind::kSub:
      return " - ";
    case ExprKind::kMul:
      return " * ";
    case ExprKind::kDiv:
      return " / ";
    case ExprKind::kFloorDiv:
      return " // ";
    case ExprKind::kFloorMod:
      return " % ";
    case ExprKind::kEq:
      return " == ";
    case ExprKind::kNe:
      return " != ";
    case ExprKind::kLt:
      return " < ";
    case ExprKind::kLe:
      return " <= ";
    case ExprKind::kGt:
      return " > ";
    case ExprKind::kGe:
      return " >= ";
    case ExprKind::kAnd:
      return " && ";
    case ExprKind::kOr:
      return " || ";
    default:
      return nullptr;
  }
}

class Printer {
 public:
  explicit Printer(bool canonical) : canonical_(canonical) {}

  std::string Expr_(const Expr& e) {
    std::string out;
    PrintExprTo(e, &out);
    return out;
  }

  void PrintProgramTo(const Program& p, std::string* out) {
    std::vector<std::string> ins, outs;
    for (const BufferPtr& b : p.inputs) ins.push_back(BufferDecl(b, "p"));
    for (const BufferPtr& b : p.outputs) outs.push_back(BufferDecl(b, "p"));
    absl::StrAppend(out, "program ", canonical_ ? "" : p.name, "(",
                    absl::StrJoin(ins, ", "), ") -> (",
                    absl::StrJoin(outs, ", "), ")\n");
    if (p.root) PrintStmtTo(*p.root, 0, out);
  }

  void PrintStmtTo(const StmtNode& s, int indent, std::string* out) {
    std::string pad(indent * 2, ' ');
    switch (s.kind) {
      case StmtKind::kFor: {
        const auto& f = *s.as<ForNode>();
        absl::StrAppend(out, pad, "for ", DefineVar(f.var, "l"), " in range(",
                        f.extent, ")");
        if (f.for_kind != ForKind::kSerial) {
          absl::StrAppend(out, " ", ForKindName(f.for_kind));
        }
        if (!f.thread_tag.empty()) absl::StrAppend(out, "(", f.thread_tag, ")");
        AppendAnnotations(f.annotations, out);
        absl::StrAppend(out, ":\n");
        PrintStmtTo(*f.body, indent + 1, out);
        break;
      }
      case StmtKind::kSeq:
        for (const auto& child : s.as<SeqNode>()->stmts) {
          PrintStmtTo(*child, indent, out);
        }
        break;
      case StmtKind::kBlock:
        PrintBlockTo(*s.as<BlockNode>(), indent, out);
        break;
      case StmtKind::kStore: {
        const auto& st = *s.as<StoreNode>();
        absl::StrAppend(out, pad, BufferName(st.buffer), "[",
                        JoinExprs(st.indices), "] = ", Expr_(st.value), "\n");
        break;
      }
      case StmtKind::kIf: {
        const auto& i = *s.as<IfNode>();
        absl::StrAppend(out, pad, "if ", Expr_(i.cond), ":\n");
        PrintStmtTo(*i.then_case, indent + 1, out);
        if (i.else_case) {
          absl::StrAppend(out, pad, "else:\n");
          PrintStmtTo(*i.else_case, indent + 1, out);
        }
        break;
      }
    }
  }

 private:
  void PrintBlockTo(const BlockNode& b, int indent, std::string* out) {
    std::string pad(indent * 2, ' ');
    std::string pad2((indent + 1) * 2, ' ');
    std::vector<std::string> ivs;
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      const IterVar& iv = b.iter_vars[i];
      std::string binding =
          i < b.iter_values.size() ? Expr_(b.iter_values[i]) : "?";
      ivs.push_back(absl::StrCat(DefineVar(iv.var, "v"), " = ",
                                 IterTypeName(iv.type), "(", iv.extent, ", ",
                                 binding, ")"));
    }
    absl::StrAppend(out, pad, "block ", canonical_ ? "" : b.name, "(",
                    absl::StrJoin(ivs, ", "), ")");
    AppendAnnotations(b.annotations, out);
    absl::StrAppend(out, ":\n");
    if (!(b.predicate.is_int_imm() && b.predicate.int_value() == 1)) {
      absl::StrAppend(out, pad2, "where ", Expr_(b.predicate), "\n");
    }
    for (const BufferPtr& buf : b.alloc_buffers) {
      absl::StrAppend(out, pad2, "alloc ", BufferDecl(buf, "a"), "\n");
    }
    if (!canonical_ && !b.iter_vars.empty()) {
      BlockAccesses acc = AccessesOf(b);
      absl::StrAppend(out, pad2, "reads ", AccessList(acc.reads), "\n");
      absl::StrAppend(out, pad2, "writes ", AccessList(acc.writes), "\n");
    }
    if (b.init) {
      absl::StrAppend(out, pad2, "init:\n");
      PrintStmtTo(*b.init, indent + 2, out);
    }
    if (b.body) PrintStmtTo(*b.body, indent + 1, out);
  }

  std::string AccessList(const std::vector<BufferAccess>& accesses) {
    std::vector<std::string> parts;
    std::map<std::string, bool> seen;
    for (const BufferAccess& a : accesses) {
      std::string text =
          absl::StrCat(BufferName(a.buffer), "[", JoinExprs(a.indices), "]");
      if (!seen[text]) parts.push_back(text);
      seen[text] = true;
    }
    return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
  }

  void AppendAnnotations(const Annotations& annotations, std::string* out) {
    if (annotations.empty()) return;
    std::vector<std::string> parts;
    for (const auto& [key, value] : annotations) {
      parts.push_back(absl::StrCat(key, "=", AnnotationValueToString(value)));
    }
    absl::StrAppend(out, " {", absl::StrJoin(parts, ", "), "}");
  }

  std::string BufferDecl(const BufferPtr& b, const char* prefix) {
    std::string decl =
        absl::StrCat(DefineBuffer(b, prefix), ": ", b->dtype.ToString(), "[",
                     absl::StrJoin(b->shape, ", "), "]");
    if (b->scope != BufferScope::kGlobal) {
      absl::StrAppend(&decl, " ", BufferScopeName(b->scope));
    }
    return decl;
  }

  std::string DefineBuffer(const BufferPtr& b, const char* prefix) {
    if (!canonical_) return b->name;
    std::string name = absl::StrCat(prefix, buffer_names_.size());
    buffer_names_[b.get()] = name;
    return name;
  }

  std::string BufferName(const BufferPtr& b) {
    if (!canonical_) return b->name;
    auto it = buffer_names_.find(b.get());
    // A buffer used before (or without) its definition: name it by its
    // properties so that equal programs still print alike.
    if (it == buffer_names_.end()) return absl::StrCat("?", b->name);
    return it->second;
  }

  std::string DefineVar(const Expr& var, const char* prefix) {
    if (!canonical_) return var->name;
    std::string name = absl::StrCat(prefix, var_names_.size());
    var_names_[var.get()] = name;
    return name;
  }

  std::string VarName(const Expr& var) {
    if (!canonical_) return var->name;
    auto it = var_names_.find(var.get());
    if (it == var_names_.end()) return absl::StrCat("?", var->name);
    return it->second;
  }

  std::string JoinExprs(const std::vector<Expr>& exprs) {
    std::vector<std::string> parts;
    for (const Expr& e : exprs) parts.push_back(Expr_(e));
    return absl::StrJoin(parts, ", ");
  }

  std::string FloatText(const ExprNode& n) {
    char buf[64];
    if (canonical_) {
      std::snprintf(buf, sizeof(buf), "%a", n.float_value);
    } else if (std::isinf(n.float_value)) {
      return n.float_value > 0 ? "inf" : "-inf";
    } else {
      std::snprintf(buf, sizeof(buf), "%.9g", n.float_value);
      std::string text = buf;
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      return n.dtype == DType::Float32() ? text + "f"
                                         : text + "_" + n.dtype.ToString();
    }
    return absl::StrCat(buf, n.dtype.ToString());
  }

  void PrintOperand(const Expr& e, int parent_prec, bool right,
                    std::string* out) {
    int prec = Precedence(e.kind());
    bool paren = prec < parent_prec || (right && prec == parent_prec);
    if (paren) out->push_back('(');
    PrintExprTo(e, out);
    if (paren) out->push_back(')');
  }

  void PrintExprTo(const Expr& e, std::string* out) {
    if (!e.defined()) {
      out->append("<undefined>");
      return;
    }
    const ExprNode& n = *e.get();
    if (const char* sym = InfixSymbol(n.kind)) {
      int prec = Precedence(n.kind);
      PrintOperand(n.operands[0], prec, false, out);
      out->append(sym);
      PrintOperand(n.operands[1], prec, true, out);
      return;
    }
    switch (n.kind) {
      case ExprKind::kIntImm:
        if (n.dtype.is_bool()) {
          out->append(n.int_value ? "true" : "false");
        } else {
          absl::StrAppend(out, n.int_value);
          if (n.dtype != DType::Index())
            absl::StrAppend(out, "_", n.dtype.ToString());
        }
        return;
      case ExprKind::kFloatImm:
        out->append(FloatText(n));
        return;
      case ExprKind::kVar:
        out->append(VarName(e));
        return;
      case ExprKind::kNot:
        out->append("!");
        PrintOperand(n.operands[0], Precedence(n.kind), false, out);
        return;
      case ExprKind::kMin:
      case ExprKind::kMax:
        absl::StrAppend(out, n.kind == ExprKind::kMin ? "min(" : "max(",
                        JoinExprs(n.operands), ")");
        return;
      case ExprKind::kSelect:
        absl::StrAppend(out, "select(", JoinExprs(n.operands), ")");
        return;
      case ExprKind::kCast:
        absl::StrAppend(out, n.dtype.ToString(), "(", Expr_(n.operands[0]),
                        ")");
        return;
      case ExprKind::kCall:
        absl::StrAppend(out, n.name, "(", JoinExprs(n.operands), ")");
        return;
      case ExprKind::kLoad:
        absl::StrAppend(out, BufferName(n.buffer), "[", JoinExprs(n.operands),
                        "]");
        return;
      default:
        absl::StrAppend(out, ExprKindName(n.kind), "(", JoinExprs(n.operands),
                        ")");
        return;
    }
  }

  bool canonical_;
  std::map<const ExprNode*, std::string> var_names_;
  std::map<const Buffer*, std::string> buffer_names_;
};

}  // namespace

std::string PrintExpr(const Expr& expr) { return Printer(false).Expr_(expr); }

std::string PrintStmt(const StmtNode& stmt) {
  std::string out;
  Printer(false).PrintStmtTo(stmt, 0, &out);
  return out;
}

std::string PrintProgram(const Program& program) {
  std::string out;
  Printer(false).PrintProgramTo(program, &out);
  return out;
}

std::string CanonicalProgramText(const Program& program) {
  std::string out;
  Printer(true).PrintProgramTo(program, &out);
  return out;
}

}  // namespace lathe

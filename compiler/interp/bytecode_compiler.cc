// The interpreter's compiler: checks a Program and turns it into the flat
// CompiledProgram of bytecode.h (variables resolved to slots, buffers to a
// table), rejecting malformed programs before anything runs.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/int_math.h"
#include "compiler/interp/bytecode.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/ir/printer.h"

namespace lathe {
namespace interp {
namespace {

// ---------------------------------------------------------------------------
// Program -> CompiledProgram.
// ---------------------------------------------------------------------------

class Compiler {
 public:
  Compiler(const Program& program, CompiledProgram* out)
      : program_(program), out_(out) {}

  absl::Status Run() {
    out_->name = program_.name;
    if (program_.root == nullptr) return Error("the program has no root block");
    int index = 0;
    for (const BufferPtr& b : program_.Params()) {
      bool is_input = index < static_cast<int>(program_.inputs.size());
      if (b == nullptr)
        return Error(absl::StrCat("parameter ", index, " is null"));
      if (scope_bufs_.count(b.get())) {
        return Error(absl::StrCat("buffer ", b->name,
                                  " is listed twice among the parameters"));
      }
      LATHE_RETURN_IF_ERROR(CheckBuffer(*b));
      int32_t id = AddBuffer(b, is_input ? BufKind::kInput : BufKind::kOutput);
      out_->buffers[id].param_index = index;
      scope_bufs_[b.get()] = id;
      allocated_.insert(b.get());
      ++index;
    }
    out_->num_params = index;
    cur_block_ = -1;
    LATHE_ASSIGN_OR_RETURN(out_->root_block, CompileBlock(*program_.root));
    out_->num_slots = num_slots_;
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const std::string& what) const {
    std::string where;
    if (cur_block_ >= 0)
      where = absl::StrCat(", in block ", out_->blocks[cur_block_].name);
    return absl::FailedPreconditionError(
        absl::StrCat("interpret ", program_.name, ": ", what, where));
  }

  absl::Status CheckBuffer(const Buffer& b) const {
    if (b.shape.size() > static_cast<size_t>(kMaxDims)) {
      return Error(absl::StrCat("buffer ", b.name, " has ", b.shape.size(),
                                " dimensions; at most ", kMaxDims,
                                " are supported"));
    }
    for (int64_t e : b.shape) {
      if (e < 0) {
        return Error(absl::StrCat("buffer ", b.name,
                                  " has a negative extent in shape ",
                                  ShapeString(b.shape)));
      }
    }
    return absl::OkStatus();
  }

  int32_t AddBuffer(const BufferPtr& b, BufKind kind) {
    BufInfo info;
    info.buffer = b;
    info.kind = kind;
    info.size = b->NumElements();
    info.is_float = b->dtype.is_float();
    info.store_round = FRoundOf(b->dtype);
    out_->buffers.push_back(std::move(info));
    return static_cast<int32_t>(out_->buffers.size() - 1);
  }

  absl::StatusOr<int32_t> Bind(const Expr& var, const char* what) {
    if (!var.is_var()) {
      return Error(absl::StrCat(what, " variable ",
                                var.defined() ? var.ToString() : "(null)",
                                " is not a variable"));
    }
    if (var.dtype().is_float()) {
      return Error(absl::StrCat(what, " variable ", var->name, " has type ",
                                var.dtype().ToString(),
                                "; it must be an integer"));
    }
    if (scope_vars_.count(var.get())) {
      return Error(absl::StrCat(what, " variable ", var->name,
                                " is bound again while already in scope"));
    }
    int32_t slot = num_slots_++;
    scope_vars_[var.get()] = slot;
    return slot;
  }

  void Unbind(const Expr& var) { scope_vars_.erase(var.get()); }

  int32_t AddNode(ENode node, const Expr& source) {
    node.block = cur_block_;
    out_->nodes.push_back(node);
    out_->node_exprs.push_back(source);
    return static_cast<int32_t>(out_->nodes.size() - 1);
  }

  bool IsFloatNode(int32_t id) const {
    return out_->nodes[id].op >= Op::kFConst;
  }

  // Wraps an int-class node in an exact int -> double conversion.
  int32_t AsFloat(int32_t id, const Expr& source) {
    if (IsFloatNode(id)) return id;
    ENode n;
    n.op = Op::kFCastInt;
    n.dtype = DType(DType::Code::kFloat, 64);
    n.fround = FRound::kNone;
    n.a = id;
    return AddNode(n, source);
  }

  absl::StatusOr<int32_t> CompileIndex(const Expr& e, const std::string& what) {
    LATHE_ASSIGN_OR_RETURN(int32_t id, CompileExpr(e));
    if (IsFloatNode(id)) {
      return Error(absl::StrCat(what, " has an index of type ",
                                e.dtype().ToString(), ": ", e.ToString()));
    }
    return id;
  }

  absl::StatusOr<int32_t> CompileExpr(const Expr& e) {
    if (!e.defined()) return Error("an expression is undefined (null)");
    const ExprNode& x = *e.get();
    const bool is_float = x.dtype.is_float();
    ENode n;
    n.dtype = x.dtype;
    n.fround = FRoundOf(x.dtype);
    if (x.dtype.is_int() && x.dtype.bits() < 64) {
      n.wrap_bits = static_cast<uint8_t>(x.dtype.bits());
      n.is_unsigned = x.dtype.code() == DType::Code::kUInt;
    }
    auto operands = [&](size_t count) -> absl::Status {
      if (x.operands.size() != count) {
        return Error(absl::StrCat(ExprKindName(x.kind), " has ",
                                  x.operands.size(), " operands, expected ",
                                  count, ": ", e.ToString()));
      }
      return absl::OkStatus();
    };
    switch (x.kind) {
      case ExprKind::kIntImm:
        if (is_float) {
          n.op = Op::kFConst;
          n.fval = RoundToDType(static_cast<double>(x.int_value), x.dtype);
        } else {
          n.op = Op::kIConst;
          n.ival = x.dtype.is_bool() ? (x.int_value != 0) : x.int_value;
        }
        return AddNode(n, e);
      case ExprKind::kFloatImm:
        if (!is_float) {
          return Error(
              absl::StrCat("float immediate of type ", x.dtype.ToString()));
        }
        n.op = Op::kFConst;
        n.fval = RoundToDType(x.float_value, x.dtype);
        return AddNode(n, e);
      case ExprKind::kVar: {
        auto it = scope_vars_.find(e.get());
        if (it == scope_vars_.end()) {
          return Error(
              absl::StrCat("variable ", x.name, " is used outside its scope"));
        }
        if (is_float) {
          return Error(absl::StrCat("variable ", x.name, " has type float"));
        }
        n.op = Op::kIVar;
        n.slot = it->second;
        return AddNode(n, e);
      }
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
      case ExprKind::kMin:
      case ExprKind::kMax: {
        LATHE_RETURN_IF_ERROR(operands(2));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        LATHE_ASSIGN_OR_RETURN(n.b, CompileExpr(x.operands[1]));
        if (IsFloatNode(n.a) != is_float || IsFloatNode(n.b) != is_float) {
          return Error(absl::StrCat(ExprKindName(x.kind), " of ",
                                    x.operands[0].dtype().ToString(), " and ",
                                    x.operands[1].dtype().ToString(),
                                    " operands with result ",
                                    x.dtype.ToString(), ": ", e.ToString()));
        }
        if (is_float) {
          static constexpr Op kOps[] = {
              Op::kFAdd,      Op::kFSub,      Op::kFMul, Op::kFDiv,
              Op::kFFloorDiv, Op::kFFloorMod, Op::kFMin, Op::kFMax};
          n.op =
              kOps[static_cast<int>(x.kind) - static_cast<int>(ExprKind::kAdd)];
        } else {
          if (x.kind == ExprKind::kDiv) {
            return Error(absl::StrCat(
                "Div of integer operands (integer division is FloorDiv): ",
                e.ToString()));
          }
          static constexpr Op kOps[] = {
              Op::kIAdd,      Op::kISub,      Op::kIMul, Op::kIAdd,
              Op::kIFloorDiv, Op::kIFloorMod, Op::kIMin, Op::kIMax};
          n.op =
              kOps[static_cast<int>(x.kind) - static_cast<int>(ExprKind::kAdd)];
        }
        return AddNode(n, e);
      }
      case ExprKind::kEq:
      case ExprKind::kNe:
      case ExprKind::kLt:
      case ExprKind::kLe:
      case ExprKind::kGt:
      case ExprKind::kGe: {
        LATHE_RETURN_IF_ERROR(operands(2));
        if (is_float)
          return Error(
              absl::StrCat("comparison of type float: ", e.ToString()));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        LATHE_ASSIGN_OR_RETURN(n.b, CompileExpr(x.operands[1]));
        int k = static_cast<int>(x.kind) - static_cast<int>(ExprKind::kEq);
        if (IsFloatNode(n.a) || IsFloatNode(n.b)) {
          n.a = AsFloat(n.a, x.operands[0]);
          n.b = AsFloat(n.b, x.operands[1]);
          n.op = static_cast<Op>(static_cast<int>(Op::kFEq) + k);
        } else {
          n.op = static_cast<Op>(static_cast<int>(Op::kIEq) + k);
        }
        n.wrap_bits = 0;
        return AddNode(n, e);
      }
      case ExprKind::kAnd:
      case ExprKind::kOr:
      case ExprKind::kNot: {
        size_t count = x.kind == ExprKind::kNot ? 1 : 2;
        LATHE_RETURN_IF_ERROR(operands(count));
        if (is_float)
          return Error(
              absl::StrCat("logical operation of type float: ", e.ToString()));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        if (count == 2) {
          LATHE_ASSIGN_OR_RETURN(n.b, CompileExpr(x.operands[1]));
        }
        if (IsFloatNode(n.a) || (count == 2 && IsFloatNode(n.b))) {
          return Error(absl::StrCat(ExprKindName(x.kind),
                                    " of a float operand: ", e.ToString()));
        }
        n.op = x.kind == ExprKind::kAnd  ? Op::kAnd
               : x.kind == ExprKind::kOr ? Op::kOr
                                         : Op::kNot;
        n.wrap_bits = 0;
        return AddNode(n, e);
      }
      case ExprKind::kSelect: {
        LATHE_RETURN_IF_ERROR(operands(3));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        LATHE_ASSIGN_OR_RETURN(n.b, CompileExpr(x.operands[1]));
        LATHE_ASSIGN_OR_RETURN(n.c, CompileExpr(x.operands[2]));
        if (IsFloatNode(n.a) || IsFloatNode(n.b) != is_float ||
            IsFloatNode(n.c) != is_float) {
          return Error(absl::StrCat("Select with mismatched operand types: ",
                                    e.ToString()));
        }
        n.op = is_float ? Op::kFSelect : Op::kISelect;
        n.wrap_bits = 0;  // the arms already have the result's type
        return AddNode(n, e);
      }
      case ExprKind::kCast: {
        LATHE_RETURN_IF_ERROR(operands(1));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        bool from_float = IsFloatNode(n.a);
        if (is_float) {
          n.op = from_float ? Op::kFCastFloat : Op::kFCastInt;
        } else {
          n.op = from_float ? Op::kICastFloat : Op::kICastInt;
        }
        return AddNode(n, e);
      }
      case ExprKind::kCall: {
        // pow(x, y) takes two arguments, the other functions one.
        if (x.name == "pow") {
          LATHE_RETURN_IF_ERROR(operands(2));
          if (!is_float) {
            return Error(absl::StrCat("function pow with result type ",
                                      x.dtype.ToString(), ": ", e.ToString()));
          }
          LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
          LATHE_ASSIGN_OR_RETURN(n.b, CompileExpr(x.operands[1]));
          n.op = Op::kFPow;
          n.a = AsFloat(n.a, x.operands[0]);
          n.b = AsFloat(n.b, x.operands[1]);
          return AddNode(n, e);
        }
        LATHE_RETURN_IF_ERROR(operands(1));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        static const std::map<std::string, Op>* kFloatFns =
            new std::map<std::string, Op>{
                {"exp", Op::kFExp},   {"sqrt", Op::kFSqrt}, {"log", Op::kFLog},
                {"tanh", Op::kFTanh}, {"erf", Op::kFErf},   {"abs", Op::kFAbs}};
        if (is_float) {
          auto it = kFloatFns->find(x.name);
          if (it == kFloatFns->end()) {
            return Error(absl::StrCat("unknown function ", x.name, " in ",
                                      e.ToString()));
          }
          n.op = it->second;
          n.a = AsFloat(n.a, x.operands[0]);
        } else if (x.name == "abs" && !IsFloatNode(n.a)) {
          n.op = Op::kIAbs;
        } else if (kFloatFns->count(x.name)) {
          return Error(absl::StrCat("function ", x.name, " with result type ",
                                    x.dtype.ToString(), " and argument type ",
                                    x.operands[0].dtype().ToString(), ": ",
                                    e.ToString()));
        } else {
          return Error(
              absl::StrCat("unknown function ", x.name, " in ", e.ToString()));
        }
        return AddNode(n, e);
      }
      case ExprKind::kLoad: {
        if (x.buffer == nullptr) return Error("load from a null buffer");
        auto it = scope_bufs_.find(x.buffer.get());
        if (it == scope_bufs_.end()) {
          return Error(
              absl::StrCat("load from buffer ", x.buffer->name,
                           ", which is neither a parameter nor allocated by an "
                           "enclosing block"));
        }
        if (x.operands.size() != x.buffer->shape.size()) {
          return Error(absl::StrCat("load from ", x.buffer->name, " with ",
                                    x.operands.size(), " indices for shape ",
                                    ShapeString(x.buffer->shape)));
        }
        if (x.dtype.is_float() != x.buffer->dtype.is_float()) {
          return Error(absl::StrCat("load of type ", x.dtype.ToString(),
                                    " from ", x.buffer->name, " of type ",
                                    x.buffer->dtype.ToString()));
        }
        std::vector<int32_t> indices;
        for (const Expr& index : x.operands) {
          LATHE_ASSIGN_OR_RETURN(
              int32_t id,
              CompileIndex(index, absl::StrCat("load from ", x.buffer->name)));
          indices.push_back(id);
        }
        n.first_index = static_cast<int32_t>(out_->index_lists.size());
        out_->index_lists.insert(out_->index_lists.end(), indices.begin(),
                                 indices.end());
        n.slot = it->second;
        n.op = is_float ? Op::kFLoad : Op::kILoad;
        n.wrap_bits = 0;  // stored values are already of the buffer's type
        return AddNode(n, e);
      }
    }
    return Error(
        absl::StrCat("unknown expression kind ", static_cast<int>(x.kind)));
  }

  int32_t AddStmt(const SNode& s) {
    out_->stmts.push_back(s);
    return static_cast<int32_t>(out_->stmts.size() - 1);
  }

  absl::StatusOr<int32_t> CompileStmt(const StmtNode* stmt) {
    if (stmt == nullptr) return Error("a statement is null");
    SNode s;
    switch (stmt->kind) {
      case StmtKind::kFor: {
        const ForNode& f = *stmt->as<ForNode>();
        if (f.extent < 0) {
          return Error(absl::StrCat("loop ",
                                    f.var.defined() ? f.var->name : "?",
                                    " has negative extent ", f.extent));
        }
        s.op = SOp::kFor;
        s.extent = f.extent;
        LATHE_ASSIGN_OR_RETURN(s.slot, Bind(f.var, "loop"));
        LATHE_ASSIGN_OR_RETURN(s.body, CompileStmt(f.body.get()));
        Unbind(f.var);
        return AddStmt(s);
      }
      case StmtKind::kSeq: {
        const SeqNode& q = *stmt->as<SeqNode>();
        std::vector<int32_t> children;
        for (const StmtPtr& child : q.stmts) {
          LATHE_ASSIGN_OR_RETURN(int32_t id, CompileStmt(child.get()));
          children.push_back(id);
        }
        s.op = SOp::kSeq;
        s.first = static_cast<int32_t>(out_->stmt_lists.size());
        s.count = static_cast<int32_t>(children.size());
        out_->stmt_lists.insert(out_->stmt_lists.end(), children.begin(),
                                children.end());
        return AddStmt(s);
      }
      case StmtKind::kBlock: {
        s.op = SOp::kBlock;
        LATHE_ASSIGN_OR_RETURN(s.block, CompileBlock(*stmt->as<BlockNode>()));
        return AddStmt(s);
      }
      case StmtKind::kStore: {
        const StoreNode& st = *stmt->as<StoreNode>();
        if (st.buffer == nullptr) return Error("store to a null buffer");
        const Buffer& b = *st.buffer;
        auto it = scope_bufs_.find(&b);
        if (it == scope_bufs_.end()) {
          return Error(
              absl::StrCat("store to buffer ", b.name,
                           ", which is neither a parameter nor allocated by an "
                           "enclosing block"));
        }
        if (st.indices.size() != b.shape.size()) {
          return Error(absl::StrCat("store to ", b.name, " with ",
                                    st.indices.size(), " indices for shape ",
                                    ShapeString(b.shape)));
        }
        std::vector<int32_t> indices;
        for (const Expr& index : st.indices) {
          LATHE_ASSIGN_OR_RETURN(
              int32_t id,
              CompileIndex(index, absl::StrCat("store to ", b.name)));
          indices.push_back(id);
        }
        s.op = SOp::kStore;
        s.buffer = it->second;
        s.block = cur_block_;
        s.first = static_cast<int32_t>(out_->index_lists.size());
        s.count = static_cast<int32_t>(indices.size());
        out_->index_lists.insert(out_->index_lists.end(), indices.begin(),
                                 indices.end());
        LATHE_ASSIGN_OR_RETURN(s.value, CompileExpr(st.value));
        s.value_is_float = IsFloatNode(s.value);
        return AddStmt(s);
      }
      case StmtKind::kIf: {
        const IfNode& i = *stmt->as<IfNode>();
        s.op = SOp::kIf;
        LATHE_ASSIGN_OR_RETURN(s.value, CompileExpr(i.cond));
        if (IsFloatNode(s.value)) {
          return Error(
              absl::StrCat("if condition of type float: ", i.cond.ToString()));
        }
        LATHE_ASSIGN_OR_RETURN(s.body, CompileStmt(i.then_case.get()));
        if (i.else_case != nullptr) {
          LATHE_ASSIGN_OR_RETURN(s.else_case, CompileStmt(i.else_case.get()));
        }
        return AddStmt(s);
      }
    }
    return Error("unknown statement kind");
  }

  // Steps: 1. iteration values in the enclosing scope; 2. bind the iteration
  // variables; 3. predicate (may use them); 4. allocations; 5. init and body;
  // 6. leave the block's scope.
  absl::StatusOr<int32_t> CompileBlock(const BlockNode& block) {
    int32_t parent = cur_block_;
    int32_t id = static_cast<int32_t>(out_->blocks.size());
    out_->blocks.emplace_back();
    out_->blocks[id].name = block.name;
    cur_block_ = id;
    BlockInfo info;
    info.name = block.name;
    if (block.iter_values.size() != block.iter_vars.size()) {
      return Error(absl::StrCat("block has ", block.iter_vars.size(),
                                " iteration variables but ",
                                block.iter_values.size(), " iteration values"));
    }
    // 1.
    for (size_t k = 0; k < block.iter_vars.size(); ++k) {
      LATHE_ASSIGN_OR_RETURN(int32_t value, CompileExpr(block.iter_values[k]));
      if (IsFloatNode(value)) {
        return Error(absl::StrCat("iteration value of type float: ",
                                  block.iter_values[k].ToString()));
      }
      info.iter_values.push_back(value);
    }
    // 2.
    for (const IterVar& iv : block.iter_vars) {
      LATHE_ASSIGN_OR_RETURN(int32_t slot, Bind(iv.var, "iteration"));
      info.iter_slots.push_back(slot);
      info.iter_names.push_back(iv.var->name);
      info.extents.push_back(iv.extent);
      if (iv.type == IterType::kReduce) {
        info.reduce_slots.push_back(slot);
        info.is_reduction = true;
      }
    }
    // 3.
    if (!block.predicate.defined())
      return Error("block predicate is undefined");
    if (!(block.predicate.is_int_imm() && block.predicate.int_value() != 0)) {
      LATHE_ASSIGN_OR_RETURN(info.predicate, CompileExpr(block.predicate));
      if (IsFloatNode(info.predicate)) {
        return Error(absl::StrCat("predicate of type float: ",
                                  block.predicate.ToString()));
      }
    }
    // 4.
    for (const BufferPtr& b : block.alloc_buffers) {
      if (b == nullptr) return Error("allocation of a null buffer");
      if (allocated_.count(b.get())) {
        return Error(
            absl::StrCat("buffer ", b->name,
                         " is allocated here but is already a parameter or "
                         "allocated by another block"));
      }
      LATHE_RETURN_IF_ERROR(CheckBuffer(*b));
      allocated_.insert(b.get());
      int32_t buf = AddBuffer(b, BufKind::kAlloc);
      scope_bufs_[b.get()] = buf;
      info.allocs.push_back(buf);
    }
    // 5.
    if (block.init != nullptr) {
      LATHE_ASSIGN_OR_RETURN(info.init, CompileStmt(block.init.get()));
    }
    if (block.body == nullptr) return Error("block has no body");
    LATHE_ASSIGN_OR_RETURN(info.body, CompileStmt(block.body.get()));
    // 6.
    for (const IterVar& iv : block.iter_vars) Unbind(iv.var);
    for (const BufferPtr& b : block.alloc_buffers) scope_bufs_.erase(b.get());
    out_->blocks[id] = std::move(info);
    cur_block_ = parent;
    return id;
  }

  const Program& program_;
  CompiledProgram* out_;
  std::map<const ExprNode*, int32_t> scope_vars_;  // variables in scope -> slot
  std::map<const Buffer*, int32_t> scope_bufs_;    // buffers in scope -> id
  std::set<const Buffer*> allocated_;  // params and every allocation
  int32_t num_slots_ = 0;
  int32_t cur_block_ = -1;
};

}  // namespace

absl::Status CompileBytecode(const Program& program, CompiledProgram* out) {
  Compiler compiler(program, out);
  return compiler.Run();
}

}  // namespace interp
}  // namespace lathe

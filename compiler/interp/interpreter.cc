#include "compiler/interp/interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/arith/int_math.h"
#include "compiler/ir/printer.h"

namespace lathe {

// ---------------------------------------------------------------------------
// The compiled form.
//
// Expressions become ENodes in one flat array; each node is either of the
// int class (int, uint and bool dtypes: evaluated as int64) or of the float
// class (evaluated as double), and its opcode says which, so evaluation never
// inspects a dtype. Children are node ids; the indices of a Load live in
// `index_lists`. Statements become SNodes the same way.
// ---------------------------------------------------------------------------

namespace {

// Loads and stores evaluate their indices into a fixed array.
constexpr int kMaxDims = 16;

enum class Op : uint8_t {
  // Int-class results.
  kIConst,
  kIVar,
  kIAdd,
  kISub,
  kIMul,
  kIFloorDiv,
  kIFloorMod,
  kIMin,
  kIMax,
  kIEq,  // comparisons of int operands
  kINe,
  kILt,
  kILe,
  kIGt,
  kIGe,
  kFEq,  // comparisons of float operands (int result)
  kFNe,
  kFLt,
  kFLe,
  kFGt,
  kFGe,
  kAnd,
  kOr,
  kNot,
  kISelect,
  kICastInt,    // int -> narrower or wider int (wraps), or bool
  kICastFloat,  // float -> int
  kIAbs,
  kILoad,
  // Float-class results.
  kFConst,
  kFAdd,
  kFSub,
  kFMul,
  kFDiv,
  kFFloorDiv,
  kFFloorMod,
  kFMin,
  kFMax,
  kFSelect,
  kFCastInt,    // int -> float
  kFCastFloat,  // float -> float
  kFExp,
  kFSqrt,
  kFLog,
  kFTanh,
  kFAbs,
  kFLoad,
};

// How a float result is rounded to its dtype.
enum class FRound : uint8_t { kNone, kF32, kOther };

struct ENode {
  Op op = Op::kIConst;
  FRound fround = FRound::kNone;
  uint8_t wrap_bits =
      0;  // int results narrower than 64 bits wrap to this width
  bool is_unsigned = false;
  DType dtype;
  int32_t a = -1, b = -1, c = -1;  // operands
  int32_t slot = -1;               // kIVar: variable slot; loads: buffer id
  int32_t first_index = 0;         // loads: offset in index_lists
  int32_t block = -1;              // the enclosing block, for messages
  int64_t ival = 0;
  double fval = 0;
};

enum class SOp : uint8_t { kFor, kSeq, kBlock, kStore, kIf };

struct SNode {
  SOp op = SOp::kSeq;
  bool value_is_float = false;  // kStore
  int32_t slot = -1;            // kFor: loop variable slot
  int64_t extent = 0;           // kFor
  int32_t body = -1;            // kFor body, kIf then-case
  int32_t else_case = -1;       // kIf
  int32_t first = 0;    // kSeq: offset in stmt_lists; kStore: in index_lists
  int32_t count = 0;    // kSeq: statements
  int32_t value = -1;   // kStore: value node; kIf: condition node
  int32_t buffer = -1;  // kStore
  int32_t block = -1;   // kBlock: the block; kStore: the enclosing block
};

enum class BufKind : uint8_t { kInput, kOutput, kAlloc };

struct BufInfo {
  BufferPtr buffer;
  BufKind kind = BufKind::kAlloc;
  int param_index = -1;
  int64_t size = 0;
  FRound store_round = FRound::kNone;
  bool is_float = false;
};

struct BlockInfo {
  std::string name;
  std::vector<std::string> iter_names;
  std::vector<int32_t> iter_slots;
  std::vector<int32_t> iter_values;
  std::vector<int64_t> extents;
  std::vector<int32_t> reduce_slots;
  bool is_reduction = false;
  int32_t predicate = -1;  // -1: always true
  std::vector<int32_t> allocs;
  int32_t init = -1;
  int32_t body = -1;
};

}  // namespace

struct CompiledProgram {
  std::string name;
  std::vector<ENode> nodes;
  std::vector<Expr> node_exprs;  // the source of each node, for messages
  std::vector<int32_t> index_lists;
  std::vector<SNode> stmts;
  std::vector<int32_t> stmt_lists;
  std::vector<BlockInfo> blocks;
  std::vector<BufInfo> buffers;  // params first, in C ABI order
  int32_t num_params = 0;
  int32_t num_slots = 0;
  int32_t root_block = -1;
};

namespace {

FRound FRoundOf(DType dtype) {
  if (!dtype.is_float() || dtype.bits() == 64) return FRound::kNone;
  return dtype.bits() == 32 ? FRound::kF32 : FRound::kOther;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

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
        LATHE_RETURN_IF_ERROR(operands(1));
        LATHE_ASSIGN_OR_RETURN(n.a, CompileExpr(x.operands[0]));
        static const std::map<std::string, Op>* kFloatFns =
            new std::map<std::string, Op>{{"exp", Op::kFExp},
                                          {"sqrt", Op::kFSqrt},
                                          {"log", Op::kFLog},
                                          {"tanh", Op::kFTanh},
                                          {"abs", Op::kFAbs}};
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

// ---------------------------------------------------------------------------
// Execution.
// ---------------------------------------------------------------------------

inline int64_t WrapInt(int64_t v, int bits, bool is_unsigned) {
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (!is_unsigned && ((u >> (bits - 1)) & 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

// An element of an int buffer as int64 (values are integral: stores round and
// inputs are validated; int64 buffers may hold doubles beyond int64's range).
inline int64_t ElementToInt(double v) {
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(v);
}

// Everything an access needs, in one place (no walk through BufInfo and the
// Buffer's shape vector on the hot path).
struct BufState {
  double* data = nullptr;
  uint8_t* written = nullptr;  // null for inputs: always initialized
  const int64_t* shape = nullptr;
  int32_t ndim = 0;
};

class Executor {
 public:
  Executor(const CompiledProgram& p, std::vector<BufState>* bufs)
      : p_(p),
        nodes_(p.nodes.data()),
        index_lists_(p.index_lists.data()),
        stmts_(p.stmts.data()),
        stmt_lists_(p.stmt_lists.data()),
        slots_(static_cast<size_t>(p.num_slots), 0),
        bufs_(bufs->data()) {}

  absl::Status Run() {
    ExecBlock(p_.root_block);
    return status_;
  }

  int64_t block_instances() const { return block_instances_; }
  int64_t stores() const { return stores_; }

 private:
  // Records the first error; later ones (computed from dummy values after the
  // first failure) are dropped.
  void Fail(absl::Status status) {
    if (failed_) return;
    failed_ = true;
    status_ = std::move(status);
  }

  std::string InBlock(int32_t block) const {
    return block >= 0 ? absl::StrCat(", in block ", p_.blocks[block].name) : "";
  }

  static std::string Element(const Buffer& b, const int64_t* idx) {
    std::vector<int64_t> v(idx, idx + b.shape.size());
    return absl::StrCat(b.name, "[", absl::StrJoin(v, ", "), "]");
  }

  // Evaluates the indices of a load or store. Returns the flat offset, or -1
  // after recording an error.
  // The common index forms (a variable, a constant) without a call.
  inline int64_t EvalIndex(int32_t id) {
    const ENode& n = nodes_[id];
    if (n.op == Op::kIVar) return slots_[n.slot];
    if (n.op == Op::kIConst) return n.ival;
    return EvalI(id);
  }

  // Evaluates the indices of an access into idx. Returns the flat offset, or
  // -1 after recording an out-of-bounds error (or when already failed).
  int64_t Offset(int32_t buffer, const int32_t* index_nodes, int32_t block,
                 bool is_store, int64_t* idx) {
    const BufState& state = bufs_[buffer];
    const int64_t* shape = state.shape;
    int64_t offset = 0;
    bool in_bounds = true;
    for (int32_t k = 0; k < state.ndim; ++k) {
      int64_t i = EvalIndex(index_nodes[k]);
      idx[k] = i;
      in_bounds &= (i >= 0) & (i < shape[k]);
      offset = offset * shape[k] + i;
    }
    if (failed_) return -1;
    if (!in_bounds) {
      const Buffer& b = *p_.buffers[buffer].buffer;
      Fail(absl::OutOfRangeError(absl::StrCat(
          is_store ? "store to " : "load of ", Element(b, idx),
          " outside shape ", ShapeString(b.shape), InBlock(block))));
      return -1;
    }
    return offset;
  }

  // Offset of a load, which must also read an element already written.
  int64_t LoadOffset(const ENode& n) {
    int64_t idx[kMaxDims];
    int64_t offset =
        Offset(n.slot, index_lists_ + n.first_index, n.block, false, idx);
    if (offset < 0) return -1;
    const uint8_t* written = bufs_[n.slot].written;
    if (written != nullptr && !written[offset]) {
      Fail(absl::FailedPreconditionError(
          absl::StrCat("read of ", Element(*p_.buffers[n.slot].buffer, idx),
                       " before it was written", InBlock(n.block))));
      return -1;
    }
    return offset;
  }

  void DivisionByZero(const ENode& n, int32_t id) {
    Fail(absl::FailedPreconditionError(
        absl::StrCat("division by zero in ", p_.node_exprs[id].ToString(),
                     InBlock(n.block))));
  }

  int64_t EvalI(int32_t id) {
    const ENode& n = nodes_[id];
    switch (n.op) {
      case Op::kIConst:
        return n.ival;
      case Op::kIVar:
        return slots_[n.slot];
      case Op::kIAdd:
        return Wrap(n, static_cast<int64_t>(static_cast<uint64_t>(EvalI(n.a)) +
                                            static_cast<uint64_t>(EvalI(n.b))));
      case Op::kISub:
        return Wrap(n, static_cast<int64_t>(static_cast<uint64_t>(EvalI(n.a)) -
                                            static_cast<uint64_t>(EvalI(n.b))));
      case Op::kIMul:
        return Wrap(n, static_cast<int64_t>(static_cast<uint64_t>(EvalI(n.a)) *
                                            static_cast<uint64_t>(EvalI(n.b))));
      case Op::kIFloorDiv:
      case Op::kIFloorMod: {
        int64_t a = EvalI(n.a);
        int64_t b = EvalI(n.b);
        if (b == 0) {
          DivisionByZero(n, id);
          return 0;
        }
        if (b == -1) {  // avoids the trap of INT64_MIN / -1
          return Wrap(n,
                      n.op == Op::kIFloorDiv
                          ? static_cast<int64_t>(0 - static_cast<uint64_t>(a))
                          : 0);
        }
        int64_t q = FloorDivInt(a, b);
        return Wrap(n, n.op == Op::kIFloorDiv ? q : a - q * b);
      }
      case Op::kIMin: {
        int64_t a = EvalI(n.a), b = EvalI(n.b);
        return a < b ? a : b;
      }
      case Op::kIMax: {
        int64_t a = EvalI(n.a), b = EvalI(n.b);
        return a > b ? a : b;
      }
      case Op::kIEq:
        return EvalI(n.a) == EvalI(n.b);
      case Op::kINe:
        return EvalI(n.a) != EvalI(n.b);
      case Op::kILt:
        return EvalI(n.a) < EvalI(n.b);
      case Op::kILe:
        return EvalI(n.a) <= EvalI(n.b);
      case Op::kIGt:
        return EvalI(n.a) > EvalI(n.b);
      case Op::kIGe:
        return EvalI(n.a) >= EvalI(n.b);
      case Op::kFEq:
        return EvalF(n.a) == EvalF(n.b);
      case Op::kFNe:
        return EvalF(n.a) != EvalF(n.b);
      case Op::kFLt:
        return EvalF(n.a) < EvalF(n.b);
      case Op::kFLe:
        return EvalF(n.a) <= EvalF(n.b);
      case Op::kFGt:
        return EvalF(n.a) > EvalF(n.b);
      case Op::kFGe:
        return EvalF(n.a) >= EvalF(n.b);
      case Op::kAnd:
        return EvalI(n.a) != 0 && EvalI(n.b) != 0;
      case Op::kOr:
        return EvalI(n.a) != 0 || EvalI(n.b) != 0;
      case Op::kNot:
        return EvalI(n.a) == 0;
      case Op::kISelect:
        return EvalI(n.a) != 0 ? EvalI(n.b) : EvalI(n.c);
      case Op::kICastInt: {
        int64_t v = EvalI(n.a);
        if (n.dtype.is_bool()) return v != 0;
        return Wrap(n, v);
      }
      case Op::kICastFloat: {
        double v = EvalF(n.a);
        if (n.dtype.is_bool()) return v != 0;
        // Beyond int64 (or NaN) a C cast is undefined: report it, since no
        // compiled kernel could be expected to agree.
        if (!(v > -9.2233720368547758e18 && v < 9.2233720368547758e18)) {
          Fail(absl::FailedPreconditionError(
              absl::StrCat("cast of ", v, " to ", n.dtype.ToString(), " in ",
                           p_.node_exprs[id].ToString(), InBlock(n.block))));
          return 0;
        }
        return Wrap(n, static_cast<int64_t>(v));
      }
      case Op::kIAbs: {
        int64_t v = EvalI(n.a);
        return Wrap(
            n, v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v);
      }
      case Op::kILoad: {
        int64_t offset = LoadOffset(n);
        if (offset < 0) return 0;
        return ElementToInt(bufs_[n.slot].data[offset]);
      }
      default:
        LATHE_CHECK(false, "interpret: float node evaluated as int");
        return 0;
    }
  }

  static inline int64_t Wrap(const ENode& n, int64_t v) {
    return n.wrap_bits != 0 ? WrapInt(v, n.wrap_bits, n.is_unsigned) : v;
  }

  static inline double Round(const ENode& n, double v) {
    switch (n.fround) {
      case FRound::kNone:
        return v;
      case FRound::kF32:
        return static_cast<double>(static_cast<float>(v));
      case FRound::kOther:
        return RoundToDType(v, n.dtype);
    }
    return v;
  }

  double EvalF(int32_t id) {
    const ENode& n = nodes_[id];
    switch (n.op) {
      case Op::kFConst:
        return n.fval;
      case Op::kFAdd:
        return Round(n, EvalF(n.a) + EvalF(n.b));
      case Op::kFSub:
        return Round(n, EvalF(n.a) - EvalF(n.b));
      case Op::kFMul:
        return Round(n, EvalF(n.a) * EvalF(n.b));
      case Op::kFDiv:
        return Round(n, EvalF(n.a) / EvalF(n.b));
      case Op::kFFloorDiv:
        return Round(n, std::floor(EvalF(n.a) / EvalF(n.b)));
      case Op::kFFloorMod: {
        double a = EvalF(n.a), b = EvalF(n.b);
        return Round(n, a - std::floor(a / b) * b);
      }
      case Op::kFMin: {
        double a = EvalF(n.a), b = EvalF(n.b);
        return b < a ? b : a;
      }
      case Op::kFMax: {
        double a = EvalF(n.a), b = EvalF(n.b);
        return a < b ? b : a;
      }
      case Op::kFSelect:
        return EvalI(n.a) != 0 ? EvalF(n.b) : EvalF(n.c);
      case Op::kFCastInt:
        return Round(n, static_cast<double>(EvalI(n.a)));
      case Op::kFCastFloat:
        return Round(n, EvalF(n.a));
      case Op::kFExp:
        return Round(n, std::exp(EvalF(n.a)));
      case Op::kFSqrt:
        return Round(n, std::sqrt(EvalF(n.a)));
      case Op::kFLog:
        return Round(n, std::log(EvalF(n.a)));
      case Op::kFTanh:
        return Round(n, std::tanh(EvalF(n.a)));
      case Op::kFAbs:
        return std::fabs(EvalF(n.a));
      case Op::kFLoad: {
        int64_t offset = LoadOffset(n);
        if (offset < 0) return 0;
        return bufs_[n.slot].data[offset];
      }
      default:
        LATHE_CHECK(false, "interpret: int node evaluated as float");
        return 0;
    }
  }

  void Exec(int32_t id) {
    const SNode& s = stmts_[id];
    switch (s.op) {
      case SOp::kFor: {
        int64_t* var = &slots_[s.slot];
        for (int64_t i = 0; i < s.extent; ++i) {
          *var = i;
          Exec(s.body);
          if (failed_) return;
        }
        return;
      }
      case SOp::kSeq:
        for (int32_t k = 0; k < s.count; ++k) {
          Exec(stmt_lists_[s.first + k]);
          if (failed_) return;
        }
        return;
      case SOp::kBlock:
        ExecBlock(s.block);
        return;
      case SOp::kStore:
        ExecStore(s);
        return;
      case SOp::kIf: {
        int64_t cond = EvalI(s.value);
        if (failed_) return;
        if (cond != 0) {
          Exec(s.body);
        } else if (s.else_case >= 0) {
          Exec(s.else_case);
        }
        return;
      }
    }
  }

  void ExecStore(const SNode& s) {
    const BufInfo& info = p_.buffers[s.buffer];
    const Buffer& b = *info.buffer;
    // Evaluation order: indices, value, then the checks of the store itself
    // (an out-of-bounds store is reported only after its value evaluated).
    int64_t idx[kMaxDims];
    BufState& state = bufs_[s.buffer];
    int64_t offset = 0;
    bool in_bounds = true;
    for (int32_t k = 0; k < state.ndim; ++k) {
      int64_t i = EvalIndex(index_lists_[s.first + k]);
      idx[k] = i;
      in_bounds &= (i >= 0) & (i < state.shape[k]);
      offset = offset * state.shape[k] + i;
    }
    double value =
        s.value_is_float ? EvalF(s.value) : static_cast<double>(EvalI(s.value));
    if (failed_) return;
    if (info.kind == BufKind::kInput) {
      Fail(absl::FailedPreconditionError(
          absl::StrCat("store to input ", Element(b, idx), InBlock(s.block))));
      return;
    }
    if (!in_bounds) {
      Fail(absl::OutOfRangeError(
          absl::StrCat("store to ", Element(b, idx), " outside shape ",
                       ShapeString(b.shape), InBlock(s.block))));
      return;
    }
    state.data[offset] = info.store_round == FRound::kF32
                             ? static_cast<double>(static_cast<float>(value))
                             : RoundToDType(value, b.dtype);
    state.written[offset] = 1;
    ++stores_;
  }

  // Steps: 1. bind the iteration variables; 2. predicate; 3. range checks;
  // 4. fresh allocations; 5. init when every reduce variable is 0; 6. body.
  void ExecBlock(int32_t id) {
    const BlockInfo& b = p_.blocks[id];
    // 1. Iteration values never use the block's own variables (checked when
    // compiling), so binding one by one is safe.
    const size_t n = b.iter_slots.size();
    for (size_t k = 0; k < n; ++k)
      slots_[b.iter_slots[k]] = EvalIndex(b.iter_values[k]);
    if (failed_) return;
    // 2.
    if (b.predicate >= 0) {
      int64_t pred = EvalI(b.predicate);
      if (failed_ || pred == 0) return;
    }
    // 3.
    for (size_t k = 0; k < n; ++k) {
      int64_t v = slots_[b.iter_slots[k]];
      if (v < 0 || v >= b.extents[k]) {
        Fail(absl::OutOfRangeError(absl::StrCat(
            "block ", b.name, ": iteration variable ", b.iter_names[k], " = ",
            v, " outside [0, ", b.extents[k], ")")));
        return;
      }
    }
    ++block_instances_;
    // 4.
    for (int32_t buf : b.allocs) {
      std::memset(bufs_[buf].written, 0,
                  static_cast<size_t>(p_.buffers[buf].size));
    }
    // 5.
    if (b.init >= 0 && b.is_reduction) {
      bool first = true;
      for (int32_t slot : b.reduce_slots) first &= slots_[slot] == 0;
      if (first) {
        Exec(b.init);
        if (failed_) return;
      }
    }
    // 6.
    Exec(b.body);
  }

  const CompiledProgram& p_;
  const ENode* nodes_;
  const int32_t* index_lists_;
  const SNode* stmts_;
  const int32_t* stmt_lists_;
  std::vector<int64_t> slots_;
  BufState* bufs_;
  bool failed_ = false;
  absl::Status status_;
  int64_t block_instances_ = 0;
  int64_t stores_ = 0;
};

// Whether an input value is one that a tensor of its dtype can hold (so the
// interpreter sees exactly what a compiled kernel would).
bool Representable(double v, DType dtype) {
  if (dtype.is_float() && std::isnan(v)) return true;
  return RoundToDType(v, dtype) == v;
}

}  // namespace

Interpreter::Interpreter(std::unique_ptr<CompiledProgram> compiled)
    : compiled_(std::move(compiled)) {}
Interpreter::Interpreter(Interpreter&&) noexcept = default;
Interpreter& Interpreter::operator=(Interpreter&&) noexcept = default;
Interpreter::~Interpreter() = default;

absl::StatusOr<Interpreter> Interpreter::Compile(const Program& program) {
  auto compiled = std::make_unique<CompiledProgram>();
  Compiler compiler(program, compiled.get());
  LATHE_RETURN_IF_ERROR(compiler.Run());
  return Interpreter(std::move(compiled));
}

absl::Status Interpreter::Run(const std::vector<TensorData*>& args,
                              InterpretStats* stats) const {
  const CompiledProgram& p = *compiled_;
  // 1. Check the arguments.
  auto params = [&] {
    std::vector<std::string> names;
    for (int32_t i = 0; i < p.num_params; ++i)
      names.push_back(p.buffers[i].buffer->name);
    return absl::StrJoin(names, ", ");
  };
  if (static_cast<int32_t>(args.size()) != p.num_params) {
    return absl::InvalidArgumentError(
        absl::StrCat("interpret ", p.name, ": expected ", p.num_params,
                     " arguments (", params(), "), got ", args.size()));
  }
  std::set<const TensorData*> distinct;
  for (int32_t i = 0; i < p.num_params; ++i) {
    const Buffer& b = *p.buffers[i].buffer;
    const TensorData* arg = args[i];
    std::string which =
        absl::StrCat("interpret ", p.name, ": argument ", i, " (", b.name, ")");
    if (arg == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(which, " is null"));
    if (!distinct.insert(arg).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " is the same tensor as an earlier argument"));
    }
    if (arg->dtype != b.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " has dtype ", arg->dtype.ToString(),
                       ", expected ", b.dtype.ToString()));
    }
    if (arg->shape != b.shape) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " has shape ", ShapeString(arg->shape),
                       ", expected ", ShapeString(b.shape)));
    }
    if (arg->size() != b.NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " holds ", arg->size(), " values for shape ",
                       ShapeString(b.shape)));
    }
    if (p.buffers[i].kind == BufKind::kInput) {
      for (int64_t k = 0; k < arg->size(); ++k) {
        double v = arg->values[static_cast<size_t>(k)];
        if (!Representable(v, b.dtype)) {
          return absl::InvalidArgumentError(absl::StrCat(
              which, ": value ", v, " at flat index ", k, " is not a ",
              b.dtype.ToString(), " value (round inputs with RoundToDType)"));
        }
      }
    }
  }
  // 2. Storage: parameters in place, one region per allocation (reused by
  // every instance of its block, which starts it over as unwritten).
  std::vector<BufState> bufs(p.buffers.size());
  std::vector<std::vector<double>> data(p.buffers.size());
  std::vector<std::vector<uint8_t>> written(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufInfo& info = p.buffers[i];
    auto n = static_cast<size_t>(info.size);
    bufs[i].shape = info.buffer->shape.data();
    bufs[i].ndim = static_cast<int32_t>(info.buffer->shape.size());
    if (info.kind == BufKind::kAlloc) {
      data[i].assign(n, std::numeric_limits<double>::quiet_NaN());
      bufs[i].data = data[i].data();
    } else {
      bufs[i].data = args[static_cast<size_t>(info.param_index)]->values.data();
    }
    if (info.kind != BufKind::kInput) {
      written[i].assign(n, 0);
      bufs[i].written = written[i].data();
    }
  }
  // 3. Run.
  Executor executor(p, &bufs);
  absl::Status status = executor.Run();
  if (stats != nullptr) {
    stats->block_instances = executor.block_instances();
    stats->stores = executor.stores();
    stats->output_written.clear();
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      if (p.buffers[i].kind == BufKind::kOutput)
        stats->output_written.push_back(written[i]);
    }
  }
  return status;
}

absl::Status Interpret(const Program& program,
                       const std::vector<TensorData*>& args,
                       InterpretStats* stats) {
  LATHE_ASSIGN_OR_RETURN(Interpreter interpreter,
                         Interpreter::Compile(program));
  return interpreter.Run(args, stats);
}

}  // namespace lathe

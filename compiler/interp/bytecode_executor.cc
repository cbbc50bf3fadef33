// The interpreter's executor: runs a CompiledProgram (bytecode.h) over
// argument storage, reporting the first dynamic error.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "compiler/arith/int_math.h"
#include "compiler/interp/bytecode.h"
#include "compiler/interp/tensor_data.h"

namespace lathe {
namespace interp {
namespace {

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
      case Op::kFErf:
        return Round(n, std::erf(EvalF(n.a)));
      case Op::kFPow: {
        double a = EvalF(n.a);
        return Round(n, std::pow(a, EvalF(n.b)));
      }
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

}  // namespace

absl::Status ExecuteBytecode(const CompiledProgram& p,
                             std::vector<BufState>* bufs,
                             ExecutionCounts* counts) {
  Executor executor(p, bufs);
  absl::Status status = executor.Run();
  counts->block_instances = executor.block_instances();
  counts->stores = executor.stores();
  return status;
}

}  // namespace interp
}  // namespace lathe

// The interpreter's compiled form ("bytecode") and the two halves that
// share it: bytecode_compiler.cc turns a Program into a CompiledProgram,
// bytecode_executor.cc runs one on argument storage. Private to
// compiler/interp (interpreter.h is the public interface; its semantics and
// errors apply here).
//
// Expressions become ENodes in one flat array; each node is either of the
// int class (int, uint and bool dtypes: evaluated as int64) or of the float
// class (evaluated as double), and its opcode says which, so evaluation never
// inspects a dtype. Children are node ids; the indices of a Load live in
// `index_lists`. Statements become SNodes the same way.
// Tests: tests/compiler/interp/interpreter_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/program.h"

namespace lathe {
namespace interp {

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
  kFErf,
  kFPow,  // a to the power b
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

}  // namespace interp

struct CompiledProgram {
  std::string name;
  std::vector<interp::ENode> nodes;
  std::vector<Expr> node_exprs;  // the source of each node, for messages
  std::vector<int32_t> index_lists;
  std::vector<interp::SNode> stmts;
  std::vector<int32_t> stmt_lists;
  std::vector<interp::BlockInfo> blocks;
  std::vector<interp::BufInfo> buffers;  // params first, in C ABI order
  int32_t num_params = 0;
  int32_t num_slots = 0;
  int32_t root_block = -1;
};

namespace interp {

inline FRound FRoundOf(DType dtype) {
  if (!dtype.is_float() || dtype.bits() == 64) return FRound::kNone;
  return dtype.bits() == 32 ? FRound::kF32 : FRound::kOther;
}

inline std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Compiles `program` into *out (empty on entry). Errors: FailedPrecondition
// for a malformed program, as Interpreter::Compile documents.
absl::Status CompileBytecode(const Program& program, CompiledProgram* out);

// Everything an access needs, in one place (no walk through BufInfo and the
// Buffer's shape vector on the hot path).
struct BufState {
  double* data = nullptr;
  uint8_t* written = nullptr;  // null for inputs: always initialized
  const int64_t* shape = nullptr;
  int32_t ndim = 0;
};

// What one execution did.
struct ExecutionCounts {
  int64_t block_instances = 0;  // executed instances, root included
  int64_t stores = 0;
};

// Runs `p` on `bufs` (one per p.buffers, set up by Interpreter::Run) and
// fills *counts. Returns the first dynamic error (OutOfRange or
// FailedPrecondition); the state of the buffers after an error is unspecified.
absl::Status ExecuteBytecode(const CompiledProgram& p,
                             std::vector<BufState>* bufs,
                             ExecutionCounts* counts);

}  // namespace interp
}  // namespace lathe

// The emitter of one lowered Program into an LLVM module: the class that
// compiler/codegen/llvm/codegen_llvm.cc drives, private to the CPU back end.
//
// One KernelEmitter walks the statement tree once. Each LLVM function it
// builds (the kernel, and one per outlined parallel loop) has the same shape:
//   entry:  allocas, heap allocations, closure loads   (FunctionState::entry)
//   body:   the statements
//   exit:   lathe_free of the heap buffers; return the status
// so that allocations happen once per call, however deep the allocating scope
// sits: a scope's storage need not survive between its executions (the IR
// says it is fresh and unwritten each time), so hoisting it is free.
//
// Its methods live in three files: kernel_emitter.cc (functions, buffers,
// statements, loops, explicit vectors), expr_emission.cc (expressions) and
// parallel_outlining.cc (parallel loops). Errors are FailedPrecondition
// naming the program (Fail), as codegen_llvm.h documents.
// Tests: tests/compiler/codegen/codegen_llvm_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"
#include "compiler/target/target.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace lathe {
namespace codegen_internal {

// `name` made a C identifier (other characters become '_'; a leading digit
// or an empty name gets a "k_" prefix).
std::string SanitizeIdentifier(const std::string& name);

// Per LLVM function being built.
struct FunctionState {
  llvm::Function* fn = nullptr;
  llvm::BasicBlock* entry = nullptr;  // allocations; ends with br to the body
  llvm::BasicBlock* exit = nullptr;
  llvm::Value* status = nullptr;   // i32 alloca: the return value
  std::vector<llvm::Value*> heap;  // lathe_alloc results, freed at exit
};

class KernelEmitter {
 public:
  // Emits into `module`; program and target must outlive the emitter.
  KernelEmitter(const Program& program, const Target& target,
                llvm::Module* module);

  // Emits the kernel as the external function `name` (and `name_packed`
  // when packed_wrapper). Call once.
  absl::Status Emit(const std::string& name, bool packed_wrapper);

 private:
  absl::Status Fail(const std::string& message) const;

  void SetFunctionAttributes(llvm::Function* fn);

  // ---- functions ---------------------------------------------------------

  void BeginFunction(llvm::Function* fn);

  void FinishFunction();

  // Inserts before the entry block's terminator.
  llvm::IRBuilder<>::InsertPoint EntryInsertPoint();

  llvm::FunctionCallee RuntimeAlloc();
  llvm::FunctionCallee RuntimeFree();

  void EmitPackedWrapper(llvm::Function* kernel, size_t num_args);

  // ---- buffers -------------------------------------------------------------

  absl::StatusOr<llvm::Type*> ValueType(DType t, const std::string& what);
  // Bools are bytes in memory.
  absl::StatusOr<llvm::Type*> StorageType(DType t, const std::string& what);

  absl::Status EmitAllocations(const BlockNode& block);

  absl::StatusOr<llvm::Value*> ElementPointer(const BufferPtr& buf,
                                              const std::vector<Expr>& indices,
                                              llvm::Type** elem);

  // ---- statements ----------------------------------------------------------

  absl::Status EmitStmt(const StmtNode& stmt);

  absl::Status EmitStore(const StoreNode& store);

  absl::Status EmitIf(const IfNode& node);

  absl::Status EmitFor(const ForNode& loop);

  // A bottom-tested loop (the extent is at least 1): LLVM's loop passes see
  // a canonical, rotated loop with a constant trip count.
  absl::Status EmitLoop(const ForNode& loop, const std::string& hint,
                        int64_t width);

  // ---- explicit vectors ----------------------------------------------------
  //
  // A vectorized loop that compiler/codegen/vector_legality.h accepts is
  // emitted as vector IR: the loop runs in chunks of `lanes` iterations, each
  // statement once per chunk on <lanes x float> values, invariant
  // subexpressions evaluated once and broadcast. This is what the loop
  // vectorizer would do, without depending on its cost model: a register
  // tile (an unrolled loop around a vectorized one over a local buffer)
  // becomes vector loads and stores at constant offsets that SROA promotes
  // to registers.

  // Chunks up to this count are emitted one after another; more run in a loop.
  static constexpr int64_t kMaxInlineVectorChunks = 8;

  absl::Status EmitVectorized(const ForNode& loop, int64_t lanes);

  // A <lanes x float> value of e for the chunk whose first iteration is
  // bound to var (checked by ExplicitVectorWidth).
  absl::StatusOr<llvm::Value*> EmitVectorExpr(const Expr& e, const Expr& var,
                                              int64_t lanes);

  // ---- parallel loops (parallel_outlining.cc) ------------------------------

  // Outlines the body into `int NAME_parN(int64_t task, void* closure)`; the
  // closure holds every buffer pointer and loop variable of the enclosing
  // scopes that the body uses.
  absl::Status EmitParallel(const ForNode& loop);

  static void CollectUses(const Expr& e, std::set<const ExprNode*>* vars,
                          std::set<const Buffer*>* bufs);

  // ---- expressions (expr_emission.cc) -------------------------------------

  llvm::Value* ToBool(llvm::Value* v);

  // IsSafeToSpeculate of vector_legality.h under the current loop ranges.
  bool IsSafeToSpeculate(const Expr& e);

  // Evaluates `then_e` or `else_e` by branching on cond, joining with a phi.
  absl::StatusOr<llvm::Value*> EmitBranchy(llvm::Value* cond,
                                           const Expr& then_e,
                                           const Expr& else_e,
                                           llvm::Value* else_value);

  absl::StatusOr<llvm::Value*> EmitExpr(const Expr& e);

  absl::StatusOr<llvm::Value*> EmitArith(const Expr& e);

  llvm::Value* FloorOf(llvm::Value* v);

  absl::StatusOr<llvm::Value*> EmitCompare(const Expr& e);

  absl::StatusOr<llvm::Value*> EmitCast(const Expr& e);

  absl::StatusOr<llvm::Value*> EmitCall(const Expr& e);

  const Program& program_;
  const Target& target_;
  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type* i1_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;
  FunctionState fs_;
  std::map<const ExprNode*, llvm::Value*> vars_;
  std::map<const Buffer*, llvm::Value*> buffers_;
  VarRanges ranges_;
  // Copies of the current statement that enclosing unrolled loops make.
  int64_t unrolled_copies_ = 1;
  int num_outlined_ = 0;
};

}  // namespace codegen_internal
}  // namespace lathe

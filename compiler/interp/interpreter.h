// The reference interpreter of the loop IR: the ground truth that schedule
// tests compare against, independent of code generation.
//
// It executes any program that any sequence of schedule primitives can
// produce, following the semantics in compiler/ir/stmt.h and expr.h exactly,
// and it reports every misbehaviour it can observe as an error instead of
// computing a plausible-looking wrong answer:
// - reading an element of a non-input buffer that has not been written in
//   this run ("read of C[3, 1] before it was written, in block C");
// - a load or store outside a buffer's shape; a store to an input;
// - a block iteration variable bound outside [0, extent);
// - integer division by zero; a variable used outside its scope; a buffer used
//   outside the block that allocates it; an unknown function.
// Execution stops at the first error. Malformed programs are rejected before
// anything runs; dynamic errors are OutOfRange (bounds, iteration ranges) or
// FailedPrecondition (the rest); bad arguments are InvalidArgument.
//
// Semantics chosen where the IR leaves freedom:
// - Every loop kind (parallel, vectorized, unrolled, thread-bound) runs
//   serially, in increasing order of its variable.
// - A block instance binds its iteration variables, then evaluates its
//   predicate (which may use loop variables and the block's own iteration
//   variables); a false predicate skips the instance before the range check,
//   so an out-of-range binding is allowed only where the predicate guards it
//   (the tail of a non-divisible split). Then init (reduction blocks whose
//   reduce variables are all 0), then the body.
// - Buffers in alloc_buffers are fresh and unwritten at every instance of the
//   allocating block.
// - Integer expressions compute in int64 (narrower integer types wrap to
//   their width after each operation); float expressions in double, rounded
//   to the expression's dtype after each operation, so float32 results match
//   float32 code for + - * / exactly. Select, And and Or evaluate only the
//   operands they need, as compiled code does.
//
// The program is compiled once into flat arrays of pre-resolved nodes
// (variables in int64 slots, buffers in a table), so large property tests
// can run many programs quickly.
// Tests: tests/compiler/interp/interpreter_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/ir/program.h"

namespace lathe {

// What one run did, for tests and throughput measurements.
struct InterpretStats {
  int64_t block_instances =
      0;  // executed instances (predicate true), root included
  int64_t stores = 0;
  // Per output parameter, per element (row-major): 1 when written in the run.
  std::vector<std::vector<uint8_t>> output_written;
};

struct CompiledProgram;  // the compiled form, private (bytecode.h)

// A program compiled for repeated runs.
class Interpreter {
 public:
  // Errors: FailedPrecondition for a malformed program (unbound or rebound
  // variable, a buffer neither a parameter nor allocated by an enclosing
  // block, unknown function, wrong index count, ...).
  static absl::StatusOr<Interpreter> Compile(const Program& program);

  // Runs the program on args in C ABI order (program.Params()). Inputs are
  // read only; outputs are written where the program stores (elements it does
  // not store keep their previous values). Each run starts from scratch.
  // Errors: InvalidArgument for a wrong number, dtype or shape of arguments,
  // or input values not representable in their dtype; OutOfRange or
  // FailedPrecondition for the dynamic errors listed at the top of this file.
  // Run keeps its state on the stack: concurrent runs are safe.
  absl::Status Run(const std::vector<TensorData*>& args,
                   InterpretStats* stats = nullptr) const;

  Interpreter(Interpreter&&) noexcept;
  Interpreter& operator=(Interpreter&&) noexcept;
  ~Interpreter();

 private:
  explicit Interpreter(std::unique_ptr<CompiledProgram> compiled);
  std::unique_ptr<CompiledProgram> compiled_;
};

// Compile and run once.
absl::Status Interpret(const Program& program,
                       const std::vector<TensorData*>& args,
                       InterpretStats* stats = nullptr);

}  // namespace lathe

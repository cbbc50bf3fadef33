// Schedules: the interface through which programs are transformed.
//
// A ConcreteSchedule owns a program and applies primitives to it. Blocks,
// loops and sampled integers are handed out as random variables (BlockRV,
// LoopRV, ExprRV): numbered handles that stay valid as long as what they name
// exists (a loop removed by fuse or inlining is gone). A TracedSchedule
// (traced_schedule.h) does the same and records every call in a Trace.
//
// Every primitive checks its preconditions first. On failure it returns an
// error naming the primitive, the block or loop and the reason, and the
// program is unchanged (primitives run on a copy that replaces the program
// only on success). Status codes: FailedPrecondition when a primitive does not
// apply to this program (the search drops the candidate), InvalidArgument for
// a malformed call (unknown handle, bad factor), Internal for a Lathe bug.
//
// Each primitive lives in its own file, compiler/schedule/primitive/<name>.cc:
// the transformation on a Program (its contract in <name>.h), the method of
// this class (resolve the handles, apply, record), and its instruction kind
// (name, attribute names, replay; instruction_kind.h). Adding a primitive
// touches 7 files: primitive/<name>.h and .cc, this interface,
// instruction_kinds.cc (declare and list the kind),
// compiler/schedule/CMakeLists.txt, and
// tests/compiler/schedule/primitive/<name>_test.cc with its entry in
// tests/compiler/schedule/CMakeLists.txt.
// Tests: tests/compiler/schedule/schedule_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"
#include "compiler/schedule/random.h"
#include "compiler/schedule/trace.h"

namespace lathe {

struct BlockRV {
  int64_t id = -1;
};
struct LoopRV {
  int64_t id = -1;
};
struct ExprRV {
  int64_t id = -1;
};

// A split factor: inferred from the others (nullopt), a constant, or a
// sampled value.
using Factor = std::variant<std::monostate, int64_t, ExprRV>;

struct InstructionKind;

class ConcreteSchedule {
 public:
  explicit ConcreteSchedule(Program program, uint64_t seed = 0);
  virtual ~ConcreteSchedule() = default;

  const Program& program() const { return program_; }
  Rng& rng() { return rng_; }

  // --- Resolving handles ---
  absl::StatusOr<std::string> BlockName(BlockRV block) const;
  absl::StatusOr<std::string> LoopName(LoopRV loop) const;
  absl::StatusOr<int64_t> Value(ExprRV value) const;
  // Whether loop is the "stay where it is" result of SampleComputeLocation.
  bool IsStayLocation(LoopRV loop) const;

  // --- Queries ---
  virtual absl::StatusOr<BlockRV> GetBlock(const std::string& name);
  // Loops enclosing the block, outermost first.
  virtual absl::StatusOr<std::vector<LoopRV>> GetLoops(BlockRV block);
  // Blocks that write what `block` reads / read what it writes, in program
  // order.
  virtual absl::StatusOr<std::vector<BlockRV>> GetProducers(BlockRV block);
  virtual absl::StatusOr<std::vector<BlockRV>> GetConsumers(BlockRV block);

  // --- Loop transformations ---
  virtual absl::StatusOr<std::vector<LoopRV>> Split(
      LoopRV loop, const std::vector<Factor>& factors);
  virtual absl::StatusOr<LoopRV> Fuse(const std::vector<LoopRV>& loops);
  virtual absl::Status Reorder(const std::vector<LoopRV>& order);
  virtual absl::Status Parallel(LoopRV loop);
  virtual absl::Status Vectorize(LoopRV loop);
  virtual absl::Status Unroll(LoopRV loop);
  // thread_axis: "blockIdx.x|y|z", "threadIdx.x|y|z", "vthread".
  virtual absl::Status Bind(LoopRV loop, const std::string& thread_axis);
  virtual absl::Status AnnotateLoop(LoopRV loop, const std::string& key,
                                    const AnnotationValue& value);
  virtual absl::Status AnnotateBlock(BlockRV block, const std::string& key,
                                     const AnnotationValue& value);

  // --- Caching and packing ---
  // A new block copying the buffer read by `block` (its read_index-th distinct
  // read buffer) into a cache of `scope`, optionally in another layout; `block`
  // then reads the cache.
  virtual absl::StatusOr<BlockRV> CacheRead(BlockRV block, int64_t read_index,
                                            const std::string& scope,
                                            const Layout& layout = {});
  // `block` writes into a cache of `scope`; a new block copies it back.
  virtual absl::StatusOr<BlockRV> CacheWrite(BlockRV block, int64_t write_index,
                                             const std::string& scope,
                                             const Layout& layout = {});

  // --- Moving computation ---
  // With the "stay" handle of sample_compute_location they do nothing.
  virtual absl::Status ComputeAt(BlockRV block, LoopRV loop,
                                 bool preserve_unit_loops = false);
  virtual absl::Status ReverseComputeAt(BlockRV block, LoopRV loop,
                                        bool preserve_unit_loops = false);
  virtual absl::Status ComputeInline(BlockRV block);
  virtual absl::Status ReverseComputeInline(BlockRV block);

  // --- Reductions ---
  // Moves the init of a reduction block into a new block placed before
  // `loop`; returns the new init block.
  virtual absl::StatusOr<BlockRV> DecomposeReduction(BlockRV block,
                                                     LoopRV loop);
  // Factorizes the reduction over `loop` into an intermediate buffer (with a
  // new dimension at factor_axis) and a final reduction; returns the rfactor
  // block.
  virtual absl::StatusOr<BlockRV> RFactor(LoopRV loop, int64_t factor_axis);

  // --- Sampling (change nothing in the program) ---
  // n factors whose product is the loop's extent, the innermost at most
  // max_innermost. With a decision, checks and uses it instead of sampling.
  virtual absl::StatusOr<std::vector<ExprRV>> SamplePerfectTile(
      LoopRV loop, int64_t n, int64_t max_innermost,
      std::optional<std::vector<int64_t>> decision = std::nullopt);
  virtual absl::StatusOr<ExprRV> SampleCategorical(
      const std::vector<int64_t>& candidates, const std::vector<double>& probs,
      std::optional<int64_t> decision = std::nullopt);
  // A loop at which `block` can be computed (compute_at), chosen uniformly
  // among the valid ones; the decision is an index into ComputeLocations(),
  // or -1 for "stay where it is" (a handle that IsStayLocation).
  virtual absl::StatusOr<LoopRV> SampleComputeLocation(
      BlockRV block, std::optional<int64_t> decision = std::nullopt);
  // Refuses (FailedPrecondition naming the values, the bound and `what`)
  // unless the product of `factors` (sampled values or constants; not
  // None) is at most `at_most`: a design space's bound on a resource that
  // several sampled values size together, checked before the primitives
  // that use them (compiler/schedule/primitive/check_product.cc).
  virtual absl::Status CheckProduct(const std::vector<Factor>& factors,
                                    int64_t at_most, const std::string& what);
  // Refuses (FailedPrecondition naming the bound, `what` and the values)
  // unless the footprint of `layout` over `factors` (footprint.h; sampled
  // values or constants, not None) is at most `at_most`: a design space's
  // bound on tiles that sampled values size together (a GPU block's shared
  // memory), checked before the primitives that build them
  // (compiler/schedule/primitive/check_footprint.cc). InvalidArgument for a
  // malformed layout.
  virtual absl::Status CheckFootprint(const std::vector<Factor>& factors,
                                      const std::vector<int64_t>& layout,
                                      int64_t at_most, const std::string& what);

 protected:
  // Called by every primitive once it succeeded: builds its instruction of
  // `kind` (attrs: one value per name in kind.attrs, in that order; nullopt
  // leaves one out) and hands it to Applied, with the decision of a sampling
  // instruction.
  void Record(const InstructionKind& kind, std::vector<TraceInput> inputs,
              std::vector<std::optional<AttrValue>> attrs,
              std::vector<int64_t> outputs,
              std::optional<std::vector<int64_t>> decision = std::nullopt);
  // A successful call: nothing here; TracedSchedule appends it to its trace.
  virtual void Applied(Instruction /*instruction*/,
                       std::optional<std::vector<int64_t>> /*decision*/) {}

  BlockRV NewBlockRV(const std::string& name);
  LoopRV NewLoopRV(const std::string& name);
  ExprRV NewExprRV(int64_t value);
  // Runs fn on a copy of the program; keeps the copy only when fn succeeds.
  absl::Status Apply(const std::function<absl::Status(Program*)>& fn);
  absl::StatusOr<int64_t> FactorValue(const Factor& factor) const;

 private:
  struct RVEntry {
    enum class Kind { kBlock, kLoop, kExpr } kind;
    std::string name;   // block or loop name
    int64_t value = 0;  // sampled value
  };
  absl::StatusOr<const RVEntry*> Entry(int64_t id, RVEntry::Kind kind,
                                       const char* what) const;

  Program program_;
  Rng rng_;
  std::vector<RVEntry> rvs_;
};

}  // namespace lathe

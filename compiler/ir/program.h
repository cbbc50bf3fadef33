// A program: one workload's computation as a loop nest, with its parameters.
//
// Parameters are the workload's inputs (in definition order) and outputs, as
// in the C ABI of compiled kernels. The body is the root block. Copying a
// Program deep-copies its statements, so a schedule can work on its own copy.
// Tests: tests/compiler/ir/program_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/stmt.h"

namespace lathe {

// One dimension of an accessed region: [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
};

// One access of a block to a buffer: the indices, as written in the body,
// over the block's iteration variables (and loop variables inside the block).
struct BufferAccess {
  BufferPtr buffer;
  std::vector<Expr> indices;
};

struct BlockAccesses {
  std::vector<BufferAccess> reads;  // in order of first appearance
  std::vector<BufferAccess> writes;
};

// The annotation (value 1) of a block that copies a layout-free input whole
// into another layout at the root, once per call: the pre-pack that
// compiler/codegen/prepack_split.h moves out of the kernel, to run once
// when the constant is known (set by tuner/space/pack_operand.h).
inline constexpr char kLayoutFreePackAnnotation[] = "lathe.layout_free_pack";

class Program {
 public:
  Program() = default;
  Program(const Program& other);
  Program& operator=(const Program& other);
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;

  std::string name;
  std::vector<BufferPtr> inputs;
  std::vector<BufferPtr> outputs;
  // The inputs whose values are constants of the kernel (a model's weights,
  // Workload::IsLayoutFreeInput): a schedule may pack them once, ahead of
  // the calls (compiler/codegen/prepack_split.h). A subset of `inputs`.
  std::vector<BufferPtr> layout_free_inputs;
  std::unique_ptr<BlockNode> root;

  // Parameters in C ABI order: inputs, then outputs.
  std::vector<BufferPtr> Params() const;
  bool IsInput(const Buffer* buffer) const;
  bool IsOutput(const Buffer* buffer) const;
  bool IsLayoutFreeInput(const Buffer* buffer) const;

  // Lookup by unique name; nullptr when absent.
  BlockNode* FindBlock(const std::string& name) const;
  ForNode* FindLoop(const std::string& name) const;
  // All blocks except the root, in execution order.
  std::vector<BlockNode*> Blocks() const;
  // The loops enclosing a statement, outermost first, up to the nearest
  // enclosing block (loops of an outer block's nest are not included).
  std::vector<ForNode*> LoopsAbove(const StmtNode* stmt) const;
  // The statement's parent, or nullptr for the root.
  StmtNode* ParentOf(const StmtNode* stmt) const;
  // The nearest block that contains stmt (the root for top-level nests).
  BlockNode* EnclosingBlock(const StmtNode* stmt) const;
  // A name based on `hint` that no loop, block, variable or buffer of the
  // program uses yet.
  std::string FreshName(const std::string& hint) const;
};

// The loads and stores of a block's init and body (not of nested blocks).
BlockAccesses AccessesOf(const BlockNode& block);
// Buffers that a block (or any block nested in it) writes / reads.
std::vector<BufferPtr> BuffersWritten(const StmtNode& stmt);
std::vector<BufferPtr> BuffersRead(const StmtNode& stmt);

}  // namespace lathe

// SplitPrepack (prepack_split.h).
// Tests: tests/compiler/codegen/prepack_split_test.cc.
#include "compiler/codegen/prepack_split.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/lower/pipeline.h"

namespace lathe {
namespace {

// The top-level statements of the root block, in order.
std::vector<StmtNode*> TopLevel(const Program& program) {
  StmtNode* body = program.root->body.get();
  if (body == nullptr) return {};
  if (auto* seq = body->as<SeqNode>()) {
    std::vector<StmtNode*> stmts;
    for (StmtPtr& s : seq->stmts) stmts.push_back(s.get());
    return stmts;
  }
  return {body};
}

bool Contains(const std::vector<BufferPtr>& buffers, const Buffer* buffer) {
  return std::any_of(buffers.begin(), buffers.end(),
                     [&](const BufferPtr& b) { return b.get() == buffer; });
}

// The pre-pack that top-level statement `stmt` is, if it is one (see the
// header): its block's read W and written P.
struct Prepack {
  size_t top = 0;  // index among the top-level statements
  size_t input = 0;
  BufferPtr original, packed;
};

std::optional<Prepack> AsPrepack(const Program& program, StmtNode* stmt) {
  std::vector<const BlockNode*> blocks;
  VisitStmts(static_cast<const StmtNode*>(stmt), [&](const StmtNode* s) {
    if (const auto* b = s->as<BlockNode>()) blocks.push_back(b);
    return true;
  });
  if (blocks.size() != 1 ||
      !blocks[0]->annotations.count(kLayoutFreePackAnnotation)) {
    return std::nullopt;
  }
  const BlockAccesses accesses = AccessesOf(*blocks[0]);
  if (accesses.reads.empty() || accesses.writes.empty()) return std::nullopt;
  Prepack p;
  p.original = accesses.reads.front().buffer;
  p.packed = accesses.writes.front().buffer;
  for (const BufferAccess& r : accesses.reads) {
    if (r.buffer != p.original) return std::nullopt;
  }
  for (const BufferAccess& w : accesses.writes) {
    if (w.buffer != p.packed) return std::nullopt;
  }
  if (!program.IsLayoutFreeInput(p.original.get()) ||
      p.packed->scope != BufferScope::kGlobal ||
      !Contains(program.root->alloc_buffers, p.packed.get())) {
    return std::nullopt;
  }
  auto it = std::find(program.inputs.begin(), program.inputs.end(), p.original);
  if (it == program.inputs.end()) return std::nullopt;
  p.input = static_cast<size_t>(it - program.inputs.begin());
  return p;
}

}  // namespace

absl::StatusOr<PrepackSplit> SplitPrepack(const Program& scheduled) {
  // 1. The pre-packs: marked copies of a layout-free input that nothing
  //    else reads, into a buffer that nothing else writes.
  const std::vector<StmtNode*> top = TopLevel(scheduled);
  std::vector<Prepack> prepacks;
  for (size_t t = 0; t < top.size(); ++t) {
    std::optional<Prepack> p = AsPrepack(scheduled, top[t]);
    if (!p.has_value()) continue;
    p->top = t;
    bool alone = true;
    for (size_t u = 0; u < top.size() && alone; ++u) {
      if (u == t) continue;
      alone = !Contains(BuffersRead(*top[u]), p->original.get()) &&
              !Contains(BuffersWritten(*top[u]), p->packed.get());
    }
    if (alone) prepacks.push_back(*std::move(p));
  }

  PrepackSplit split;
  if (prepacks.empty()) {
    absl::StatusOr<Program> lowered = LowerProgram(scheduled);
    if (!lowered.ok()) return lowered.status();
    split.main = *std::move(lowered);
    return split;
  }
  std::sort(
      prepacks.begin(), prepacks.end(),
      [](const Prepack& a, const Prepack& b) { return a.input < b.input; });

  // 2. Each pre-pack as a program of its own: the original in, the packed
  //    buffer out, the statement as it was scheduled.
  std::set<size_t> moved;
  for (const Prepack& p : prepacks) {
    Program prepack;
    prepack.name = absl::StrCat(scheduled.name, "_prepack_", p.original->name);
    prepack.inputs = {p.original};
    prepack.outputs = {p.packed};
    prepack.root = std::make_unique<BlockNode>();
    prepack.root->name = "root";
    prepack.root->body = CloneStmt(*top[p.top]);
    absl::StatusOr<Program> lowered = LowerProgram(prepack);
    if (!lowered.ok()) return lowered.status();
    split.packed.push_back(
        {p.input, p.original, p.packed, *std::move(lowered)});
    moved.insert(p.top);
  }

  // 3. The main program without them, taking the packed buffers as
  //    parameters in the originals' places.
  Program main = scheduled;
  std::vector<StmtPtr> kept;
  std::vector<StmtPtr> stmts;
  if (auto* seq = main.root->body->as<SeqNode>()) {
    stmts = std::move(seq->stmts);
  } else {
    stmts.push_back(std::move(main.root->body));
  }
  for (size_t t = 0; t < stmts.size(); ++t) {
    if (!moved.count(t)) kept.push_back(std::move(stmts[t]));
  }
  main.root->body = MakeSeq(std::move(kept));
  for (const Prepack& p : prepacks) {
    std::vector<BufferPtr>& allocs = main.root->alloc_buffers;
    allocs.erase(std::remove(allocs.begin(), allocs.end(), p.packed),
                 allocs.end());
    main.inputs[p.input] = p.packed;
    std::vector<BufferPtr>& free = main.layout_free_inputs;
    free.erase(std::remove(free.begin(), free.end(), p.original), free.end());
  }
  absl::StatusOr<Program> lowered = LowerProgram(main);
  if (!lowered.ok()) return lowered.status();
  split.main = *std::move(lowered);
  return split;
}

}  // namespace lathe

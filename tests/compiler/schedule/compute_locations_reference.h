// The reference of ComputeLocations for tests: what it promised before it was
// made fast, computed the slow way. Every loop above a consumer of the block
// is tried by running ComputeAt (preserve_unit_loops) on a copy of the whole
// program; the loops where it succeeds, in program order.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/ir/program.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/primitive/compute_at.h"

namespace lathe::testing {

// The candidates the reference tries (the loops above the block's
// consumers), in program order.
inline std::vector<const ForNode*> ComputeLocationCandidates(
    const Program& program, const std::string& block_name) {
  BlockNode* block = program.FindBlock(block_name);
  if (block == nullptr || block == program.root.get()) return {};
  std::set<const ForNode*> candidates;
  for (const BufferPtr& written : BuffersWritten(*block)) {
    for (BlockNode* reader : ReadersOf(program, written.get())) {
      if (reader == block) continue;
      for (ForNode* l : program.LoopsAbove(reader)) candidates.insert(l);
    }
  }
  std::vector<const ForNode*> ordered;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               const auto* loop = s->as<ForNode>();
               if (loop != nullptr && candidates.count(loop))
                 ordered.push_back(loop);
               return true;
             });
  return ordered;
}

inline std::vector<std::string> ComputeLocationsReference(
    const Program& program, const std::string& block_name) {
  std::vector<std::string> locations;
  for (const ForNode* loop : ComputeLocationCandidates(program, block_name)) {
    Program trial = program;
    if (primitive::ComputeAt(&trial, block_name, loop->var->name,
                             /*preserve_unit_loops=*/true)
            .ok()) {
      locations.push_back(loop->var->name);
    }
  }
  return locations;
}

}  // namespace lathe::testing

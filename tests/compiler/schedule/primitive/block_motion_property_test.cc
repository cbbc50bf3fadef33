// Property test of the block-motion primitives (compute_at,
// reverse_compute_at, compute_inline, reverse_compute_inline): random
// sequences of them, mixed with loop transformations, on small programs.
// Whenever a primitive accepts, the program must still compute what the
// unscheduled one does (checked by the interpreter); whenever it refuses,
// the error must be FailedPrecondition.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/cache_read.h"
#include "compiler/schedule/primitive/cache_write.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/primitive/fuse.h"
#include "compiler/schedule/primitive/reorder.h"
#include "compiler/schedule/primitive/split.h"
#include "tests/compiler/schedule/compute_locations_reference.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

std::vector<std::string> LoopNamesOf(const Program& p) {
  std::vector<std::string> names;
  VisitStmts(static_cast<const StmtNode*>(p.root.get()),
             [&](const StmtNode* s) {
               if (const auto* f = s->as<ForNode>())
                 names.push_back(f->var->name);
               return true;
             });
  return names;
}

std::vector<std::string> BlockNamesOf(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

Program PickProgram(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return testing::PadStencilProgram(5 + static_cast<int64_t>(rng() % 9));
    case 1:
      return testing::DenseBiasReluProgram(6, 5, 3);
    case 2:
      return testing::DenseBiasReluProgram(7, 4, 2);
    case 3:
      return testing::ElementwiseChainProgram(3, 5);
    case 4:
      return testing::TwoStageProgram(7);
    default:
      return testing::MatmulProgram(5, 6, 3);
  }
}

TEST(BlockMotionProperty, AcceptedMovesKeepResults) {
  std::mt19937_64 rng(20240601);
  std::map<std::string, int> accepted;
  for (int round = 0; round < 300; ++round) {
    Program initial = PickProgram(rng);
    Program p = initial;
    std::string history;
    for (int step = 0; step < 10; ++step) {
      std::vector<std::string> loops = LoopNamesOf(p);
      std::vector<std::string> blocks = BlockNamesOf(p);
      auto any = [&](const std::vector<std::string>& v) {
        return v.empty() ? std::string("none") : v[rng() % v.size()];
      };
      std::string block = any(blocks);
      std::string loop = any(loops);
      Program trial = p;
      absl::Status s;
      std::string op;
      bool mine = true;
      switch (rng() % 11) {
        case 10: {
          // Caches of program inputs only: a cache of a packed cache copies
          // its padding, which nothing wrote (a cache_read matter).
          mine = false;
          BlockNode* reader = p.FindBlock(block);
          if (reader == nullptr) continue;
          BlockAccesses acc = AccessesOf(*reader);
          const Buffer* first = nullptr;
          for (const BufferAccess& r : acc.reads) {
            bool written = false;
            for (const BufferAccess& w : acc.writes)
              written = written || w.buffer == r.buffer;
            if (!written) {
              first = r.buffer.get();
              break;
            }
          }
          bool is_input = false;
          for (const BufferPtr& in : p.inputs)
            is_input = is_input || in.get() == first;
          if (!is_input) continue;
          Layout layout;
          if (rng() % 2 == 0)
            layout =
                Layout{{1, 2 + static_cast<int64_t>(rng() % 3)}, {1, 0, 2}};
          op = absl::StrCat("cache_read(", block, ", packed=", !layout.empty(),
                            ")");
          s = primitive::CacheRead(&trial, block, 0, BufferScope::kGlobal,
                                   layout)
                  .status();
          break;
        }
        case 9: {
          mine = false;
          op = absl::StrCat("cache_write(", block, ")");
          s = primitive::CacheWrite(&trial, block, 0, BufferScope::kLocal,
                                    Layout{})
                  .status();
          break;
        }
        case 0:
          op = absl::StrCat("compute_at(", block, ", ", loop, ")");
          s = primitive::ComputeAt(&trial, block, loop, rng() % 2 == 0);
          break;
        case 1:
          op = absl::StrCat("reverse_compute_at(", block, ", ", loop, ")");
          s = primitive::ReverseComputeAt(&trial, block, loop, rng() % 2 == 0);
          break;
        case 2:
          op = absl::StrCat("compute_inline(", block, ")");
          s = primitive::ComputeInline(&trial, block);
          break;
        case 3:
          op = absl::StrCat("reverse_compute_inline(", block, ")");
          s = primitive::ReverseComputeInline(&trial, block);
          break;
        case 4: {
          std::vector<std::string> at = primitive::ComputeLocations(p, block);
          // The fast list is the list of trials of compute_at.
          EXPECT_EQ(at, testing::ComputeLocationsReference(p, block))
              << block << " after" << history << "\n"
              << PrintProgram(p);
          if (at.empty()) continue;
          loop = at[rng() % at.size()];
          op = absl::StrCat("compute_at(", block, ", ", loop, ") [sampled]");
          s = primitive::ComputeAt(&trial, block, loop, false);
          // A sampled location must be accepted.
          EXPECT_TRUE(s.ok()) << op << ": " << s << "\nafter" << history << "\n"
                              << PrintProgram(p);
          break;
        }
        case 5:
        case 6: {
          mine = false;
          int64_t factor = 2 + static_cast<int64_t>(rng() % 3);
          op = absl::StrCat("split(", loop, ", ", factor, ")");
          s = primitive::Split(&trial, loop, {std::nullopt, factor}).status();
          break;
        }
        case 7: {
          mine = false;
          std::string other = any(loops);
          op = absl::StrCat("reorder(", other, ", ", loop, ")");
          s = primitive::Reorder(&trial, {other, loop});
          break;
        }
        default: {
          mine = false;
          ForNode* outer = p.FindLoop(loop);
          if (outer == nullptr || outer->body == nullptr ||
              outer->body->as<ForNode>() == nullptr) {
            continue;
          }
          std::string inner = outer->body->as<ForNode>()->var->name;
          op = absl::StrCat("fuse(", loop, ", ", inner, ")");
          s = primitive::Fuse(&trial, {loop, inner}).status();
          break;
        }
      }
      if (!s.ok()) {
        if (mine) {
          EXPECT_TRUE(s.code() == absl::StatusCode::kFailedPrecondition ||
                      s.code() == absl::StatusCode::kInvalidArgument)
              << op << ": " << s;
        }
        continue;
      }
      history += "\n  " + op;
      if (mine) ++accepted[op.substr(0, op.find('('))];
      absl::Status same = testing::CheckSameResult(initial, trial, round);
      ASSERT_TRUE(same.ok()) << same << "\nafter" << history << "\n"
                             << "before the last step:\n"
                             << PrintProgram(p) << "\nafter:\n"
                             << PrintProgram(trial);
      p = std::move(trial);
    }
  }
  // The test must exercise every primitive.
  for (const char* name : {"compute_at", "reverse_compute_at", "compute_inline",
                           "reverse_compute_inline"}) {
    EXPECT_GT(accepted[name], 5) << name;
  }
  for (const auto& [name, count] : accepted)
    std::cout << name << ": " << count << "\n";
}

}  // namespace
}  // namespace lathe

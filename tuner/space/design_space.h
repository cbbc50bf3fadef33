// Design spaces of a workload for a target: the rules applied to every block.
//
// Blocks are visited from the last (the outputs) to the first, as blocks may
// be inlined into their consumers or computed at them; each rule is applied to
// each block in the order given, every branch of a rule continuing
// separately. The result is a few traces with sampling instructions; sampling
// one (ReplayTrace with no decisions and a seed) gives a program of the space.
// Tests: tests/tuner/space/design_space_test.cc.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/schedule/trace.h"
#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

// The rules for CPU targets (llvm), in the order they apply.
std::vector<std::unique_ptr<ScheduleRule>> DefaultCpuRules();
// The rules for GPU targets (cuda), in the order they apply.
std::vector<std::unique_ptr<ScheduleRule>> DefaultGpuRules();
// DefaultGpuRules for a cuda target, else DefaultCpuRules.
std::vector<std::unique_ptr<ScheduleRule>> RulesForTarget(const Target& target);

// The most design spaces one workload gets. Branches multiply block after
// block (a rule with two branches on each of n blocks gives 2^n spaces), so
// a workload of many reductions would otherwise take minutes and gigabytes
// before its first trial. Once this many schedules are under way, a rule's
// further branches are dropped and only its first (its main choice) goes
// on: generation stays linear in the blocks past the bound.
inline constexpr int kMaxDesignSpaces = 32;

absl::StatusOr<std::vector<Trace>> GenerateDesignSpaces(
    const Workload& workload, const Target& target,
    const std::vector<std::unique_ptr<ScheduleRule>>& rules);

}  // namespace lathe::tuner

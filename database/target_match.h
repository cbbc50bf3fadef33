// Which stored targets may answer a lookup for another target, and how close
// they are.
//
// Records measured on target C may stand in for target W when both are of the
// same kind and W has every feature C has (so C's schedule uses nothing W
// lacks); the thread count and the CPU may differ. Closer targets answer
// first: same CPU and threads, then same threads, then same CPU, then the
// nearest thread count.
// Tests: tests/database/target_match_test.cc.
#pragma once

#include <optional>
#include <string>
#include <tuple>

#include "proto/record.pb.h"

namespace lathe::db {

// nullopt when records of `candidate` may not answer for `wanted`; otherwise
// how the two differ in words ("" when they are the same target).
std::optional<std::string> CompatibleDifference(
    const proto::TargetInfo& wanted, const proto::TargetInfo& candidate);

// Sort key: smaller is closer. Only meaningful for compatible candidates.
std::tuple<int, int, int> Closeness(const proto::TargetInfo& wanted,
                                    const proto::TargetInfo& candidate);

}  // namespace lathe::db

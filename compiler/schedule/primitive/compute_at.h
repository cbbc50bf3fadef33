// compute_at and reverse_compute_at: move a block under a loop of another.
//
// compute_at(producer, loop): the producer block moves under `loop` (a loop
// above one of its consumers), into loops that cover exactly the region of its
// output that the consumers read within one iteration of `loop` (bound
// inference over the loops below `loop`); its bindings are offset by the
// region's start, with a predicate where the region is clipped by the
// buffer's bounds. reverse_compute_at(consumer, loop) is the mirror: the
// consumer moves under a loop of its producer and computes the region the
// producer wrote in one iteration.
// Preconditions (errors name the block and the loop): the block is the only
// writer of its outputs (compute_at) / the only reader... ; the loop is not
// under the block itself; every consumer (producer) of the block is under the
// loop; no block between the old and new position writes what the block reads
// or reads what it writes (the order of dependences is kept); for
// compute_at, the region must cover all the consumer's reads under the loop.
// Tests: tests/compiler/schedule/primitive/{compute_at,reverse_compute_at}_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status ComputeAt(Program* program, const std::string& block,
                       const std::string& loop, bool preserve_unit_loops);
absl::Status ReverseComputeAt(Program* program, const std::string& block,
                              const std::string& loop, bool preserve_unit_loops);
// The loops under which compute_at(block, loop) is valid, outermost first
// (what sample_compute_location chooses from).
std::vector<std::string> ComputeLocations(const Program& program,
                                          const std::string& block);

}  // namespace lathe::primitive

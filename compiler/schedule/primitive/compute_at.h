// compute_at and reverse_compute_at: move a block under a loop of another.
//
// compute_at(producer, loop): the producer moves to the front of `loop`'s
// body, into new loops (ax0, ax1, ...; one per iteration variable, outermost
// first) that cover the region of its buffer that its consumers read in one
// iteration of `loop` (analysis/region.h): a spatial variable is bound to
// region min + its loop, a reduction variable gets a loop over its whole
// extent. Where the region leaves [0, extent) of a variable (halos at the
// border, tails of splits), a predicate clips it. Elements that the regions
// of two iterations share are computed in both (same values).
// reverse_compute_at(consumer, loop): the mirror; the consumer moves to the
// end of `loop`'s body and computes the region that its producers under the
// loop write in one iteration. Supported consumers read each such producer's
// buffer at exactly their own iteration variables (write-backs of
// cache_write, element-wise epilogues); the producer's write region must be
// an exact box, and a reduction producer complete within one iteration.
// With preserve_unit_loops false, new loops of extent 1 are left out.
//
// Preconditions, each a FailedPrecondition naming the block, the loop and the
// reason (unknown names are InvalidArgument):
// - both: the loop is not inside the block and both are in the same block;
//   the moved block's body uses only its iteration variables and its
//   predicate only clips its domain (split tails);
// - compute_at: the block writes one buffer, not an output, at its spatial
//   iteration variables, and is its only writer; every reader of the buffer
//   is under the loop and after the block; no block that may now run between
//   the block's old and new instances writes what it reads; the consumers'
//   read regions can be inferred and joined;
// - reverse_compute_at: the block is not a reduction and comes after the
//   loop; no block that may run between the loop and its old place reads or
//   writes what it writes, or writes what it reads other than its producers
//   under the loop; each such producer is the only writer of its buffer,
//   writes it at its iteration variables and covers the block's extents;
//   at least one producer is under the loop; all producers give the block's
//   variables the same region.
// Tests: tests/compiler/schedule/primitive/{compute_at,reverse_compute_at,
// block_motion_property,compute_locations}_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status ComputeAt(Program* program, const std::string& block,
                       const std::string& loop, bool preserve_unit_loops);
absl::Status ReverseComputeAt(Program* program, const std::string& block,
                              const std::string& loop,
                              bool preserve_unit_loops);
// The loops under which compute_at(block, loop, preserve_unit_loops=true) is
// valid, in program order (outer loops before inner ones), among the loops
// above a consumer of the block; only the first max_count of them (the list
// stops early, so a caller that needs the location at index d asks for
// d + 1). Empty for an unknown block.
// It gives what trying ComputeAt on a copy of the program at each candidate
// gives, faster: the checks that do not depend on the loop run once, the
// others per candidate on one index of the program, and the data-parallel
// check of concurrent loops (the only step that needs the moved block in
// place) on one working copy, only for candidates under such a loop.
// compute_locations_test.cc compares it with those trials
// (tests/compiler/schedule/compute_locations_reference.h).
std::vector<std::string> ComputeLocations(
    const Program& program, const std::string& block,
    size_t max_count = std::numeric_limits<size_t>::max());

}  // namespace lathe::primitive

// The text form of a graph, for `lathe graph` and golden tests: stable (the
// same graph prints the same bytes), readable, and short where data is
// large: constants show their type and, up to 8 elements, their values;
// larger ones a count only.
//
//   graph {
//     input %x: f32[1,3,8,8]
//     const %w: f32[4,3,3,3] (108 values)
//     const %axes: i64[1] = [0]
//     %y: f32[1,4,8,8] = Conv(%x, %w, _) {group=1, pads=[1,1,1,1]}  # conv0
//     output %y
//   }
//
// Values appear in the order their ids have; a value that is dead is not
// shown, an untyped one shows `?`. Attributes are sorted by name.
// Tests: tests/compiler/graph/printer_test.cc.
#pragma once

#include <string>

#include "compiler/graph/graph.h"

namespace lathe::graph {

std::string PrintGraph(const Graph& graph);

}  // namespace lathe::graph

// Structural equality and hashing of programs.
//
// Two programs are structurally equal when they compute the same way: the
// same loop nests (extents, kinds, annotations, thread tags), blocks
// (iteration types, extents, bindings, predicates, allocations), stores and
// expressions, up to a consistent renaming of variables, loops, blocks and
// allocated buffers. Both compare the canonical text of printer.h, so equality
// and hash always agree, and the hash is the same in every process and on every
// machine (FNV-1a 64 of that text): the search deduplicates measured programs
// by it, and the database stores it to detect a compiler that changed.
// Tests: tests/compiler/ir/structural_equal_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/ir/program.h"

namespace lathe {

bool StructuralEqual(const Program& a, const Program& b);
uint64_t StructuralHash(const Program& program);
// The hash as 16 lower-case hex digits.
std::string StructuralHashHex(const Program& program);

// FNV-1a 64 of bytes: stable across processes, machines and versions.
uint64_t StableHash64(const std::string& bytes);

}  // namespace lathe

#include "compiler/ir/structural_equal.h"

#include <cstdio>

#include "compiler/ir/printer.h"

namespace lathe {

uint64_t StableHash64(const std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

bool StructuralEqual(const Program& a, const Program& b) {
  return CanonicalProgramText(a) == CanonicalProgramText(b);
}

uint64_t StructuralHash(const Program& program) {
  return StableHash64(CanonicalProgramText(program));
}

std::string StructuralHashHex(const Program& program) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(StructuralHash(program)));
  return buf;
}

}  // namespace lathe

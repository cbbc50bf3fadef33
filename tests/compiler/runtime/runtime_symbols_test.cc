// Tests of the JIT's symbol table (compiler/runtime/runtime_symbols.cc).
#include "compiler/runtime/runtime_symbols.h"

#include <set>
#include <string>

#include "compiler/runtime/lathe_runtime.h"
#include "gtest/gtest.h"

namespace lathe::runtime {
namespace {

TEST(RuntimeSymbolsTest, ListsEveryFunctionOfTheHeaderWithItsAddress) {
  int count = 0;
  const RuntimeSymbol* symbols = RuntimeSymbols(&count);
  std::set<std::string> names;
  for (int i = 0; i < count; ++i) {
    ASSERT_NE(symbols[i].address, nullptr) << symbols[i].name;
    names.insert(symbols[i].name);
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "lathe_parallel_for", "lathe_set_num_threads",
                       "lathe_get_num_threads", "lathe_alloc", "lathe_free",
                       "lathe_runtime_version"}));
  for (int i = 0; i < count; ++i) {
    if (std::string(symbols[i].name) == "lathe_parallel_for") {
      EXPECT_EQ(symbols[i].address,
                reinterpret_cast<void*>(&lathe_parallel_for));
    }
  }
}

}  // namespace
}  // namespace lathe::runtime

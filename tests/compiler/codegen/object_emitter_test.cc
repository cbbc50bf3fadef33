// Tests of compiler/codegen/llvm/object_emitter.h: an emitted object file is
// linked into a small C program by the system C compiler and run.
#include "compiler/codegen/llvm/object_emitter.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "compiler/codegen/cpu_target.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace lathe {
namespace {

using ::lathe::testing::MakeLoweredProgram;

// C[i, j] = sum_k A[i, k] * B[k, j] with the j loop vectorized, 5 x 13 x 7.
Program SmallMatmul() {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {5, 7});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {7, 13});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {5, 13});
  Expr i = Var("i"), j = Var("j"), k = Var("k"), j2 = Var("j2");
  std::vector<StmtPtr> body;
  body.push_back(MakeFor(j2, 13, MakeStore(c, {i, j2}, Expr(0.0))));
  body.push_back(MakeFor(
      k, 7,
      MakeFor(j, 13,
              MakeStore(c, {i, j},
                        Load(c, {i, j}) + Load(a, {i, k}) * Load(b, {k, j})),
              ForKind::kVectorized)));
  return MakeLoweredProgram("small matmul", {a, b}, {c},
                            MakeFor(i, 5, MakeSeq(std::move(body))));
}

TEST(ObjectEmitter, LinksIntoACProgram) {
  if (std::system("command -v cc > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no C compiler (cc) on PATH: object linking not tested";
  }
  char dir_template[] = "/tmp/lathe_obj_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  CodegenOptions options;
  options.function_name = "lathe_small_matmul";
  absl::Status st =
      EmitObjectFile(SmallMatmul(), HostTarget(1), dir + "/kernel.o", options);
  ASSERT_TRUE(st.ok()) << st;
  std::ofstream(dir + "/main.c") << R"(#include <stdio.h>
int lathe_small_matmul(const float* a, const float* b, float* c);
int main(void) {
  float a[5 * 7], b[7 * 13], c[5 * 13];
  for (int i = 0; i < 5 * 7; ++i) a[i] = (float)(i % 5) - 2.0f;
  for (int i = 0; i < 7 * 13; ++i) b[i] = (float)(i % 3) * 0.5f;
  if (lathe_small_matmul(a, b, c) != 0) return 3;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 13; ++j) {
      float want = 0;
      for (int k = 0; k < 7; ++k) want += a[i * 7 + k] * b[k * 13 + j];
      if (c[i * 13 + j] != want) { printf("C[%d,%d] = %f, want %f\n", i, j, c[i * 13 + j], want); return 2; }
    }
  printf("ok\n");
  return 0;
}
)";
  std::string cmd =
      "cd " + dir + " && cc -o prog main.c kernel.o -lm > cc.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "cc failed; see " << dir << "/cc.log";
  std::string run = dir + "/prog > " + dir + "/out.txt 2>&1";
  int rc = std::system(run.c_str());
  std::ifstream out(dir + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(WEXITSTATUS(rc), 0) << text;
  EXPECT_EQ(text, "ok\n");
  std::system(("rm -rf " + dir).c_str());
}

TEST(ObjectEmitter, ReportsUnwritablePath) {
  absl::Status st =
      EmitObjectFile(SmallMatmul(), HostTarget(1), "/nonexistent-dir/k.o");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("/nonexistent-dir/k.o"),
            std::string::npos);
}

}  // namespace
}  // namespace lathe

// Tests of compiler/codegen/llvm/model_entry_emitter.h: a model entry that
// chains a kernel through the arena, reads an embedded constant and copies
// an input to an output is linked with the runtime (.a) into a C program
// and run; bad entries are refused naming what is wrong; the bytes repeat.
#include "compiler/codegen/llvm/model_entry_emitter.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_library.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace lathe {
namespace {

using ::lathe::testing::MakeLoweredProgram;

// C[i] = A[i] + B[i], 8 floats.
Program AddKernel() {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {8});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {8});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {8});
  Expr i = Var("i");
  return MakeLoweredProgram(
      "add", {a, b}, {c},
      MakeFor(i, 8, MakeStore(c, {i}, Load(a, {i}) + Load(b, {i}))));
}

EntryBuffer In(int i) { return {EntryBuffer::Kind::kInput, i}; }
EntryBuffer Out(int i) { return {EntryBuffer::Kind::kOutput, i}; }
EntryBuffer Const(int i) { return {EntryBuffer::Kind::kConstant, i}; }
EntryBuffer Arena(int64_t offset) {
  return {EntryBuffer::Kind::kArena, offset};
}

class ModelEntryEmitter : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = AddKernel();
    ObjectKernel object;
    object.lowered = &kernel_;
    object.options.function_name = "tiny_kernel_0";
    kernels_ = {object};
    // y = ((x + 1) + (x + 1)) + 1, z = x.
    entry_.function_name = "tiny";
    entry_.num_inputs = 1;
    entry_.num_outputs = 2;
    entry_.constants = {{"ones", ones_.data(), 8}};
    entry_.arena_bytes = 128;
    entry_.calls = {{0, {In(0), Const(0), Arena(0)}},
                    {0, {Arena(0), Arena(0), Arena(64)}},
                    {0, {Arena(64), Const(0), Out(0)}}};
    entry_.copies = {{1, In(0), 8}};
  }

  Program kernel_;
  std::vector<ObjectKernel> kernels_;
  std::vector<float> ones_ = std::vector<float>(8, 1.0f);
  ModelEntry entry_;
};

TEST_F(ModelEntryEmitter, RunsTheCallsInOrderFromC) {
  if (std::system("command -v cc > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no C compiler (cc) on PATH: linking not tested";
  }
  absl::StatusOr<std::string> object =
      EmitModelObject(kernels_, entry_, HostTarget(1));
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<std::string> archive = KernelStaticLibrary(*object, "tiny");
  ASSERT_TRUE(archive.ok()) << archive.status();
  char dir_template[] = "/tmp/lathe_model_entry_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  ASSERT_TRUE(WriteFileBytes(dir + "/tiny.a", *archive).ok());
  std::ofstream(dir + "/main.c") << R"(#include <stdio.h>
int tiny(const float* x, float* y, float* z);
int tiny_kernel_0(const float* a, const float* b, float* c);
#pragma weak tiny_kernel_0
int main(void) {
  float x[8], y[8], z[8];
  int i;
  for (i = 0; i < 8; ++i) { x[i] = (float)i - 3.0f; y[i] = z[i] = -1000.0f; }
  if (tiny(x, y, z) != 0) return 3;
  for (i = 0; i < 8; ++i) {
    float want = ((x[i] + 1.0f) + (x[i] + 1.0f)) + 1.0f;
    if (y[i] != want || z[i] != x[i]) {
      printf("%d: y %f want %f, z %f want %f\n", i, y[i], want, z[i], x[i]);
      return 2;
    }
  }
  if (tiny_kernel_0 != 0) { printf("the kernel is exported\n"); return 4; }
  printf("ok\n");
  return 0;
}
)";
  const std::string cmd = "cd " + dir +
                          " && cc -o prog main.c tiny.a -lpthread -lm > "
                          "cc.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "cc failed; see " << dir << "/cc.log";
  const std::string run = dir + "/prog > " + dir + "/out.txt 2>&1";
  const int rc = std::system(run.c_str());
  std::ifstream out(dir + "/out.txt");
  const std::string text((std::istreambuf_iterator<char>(out)),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(WEXITSTATUS(rc), 0) << text;
  EXPECT_EQ(text, "ok\n");
  std::system(("rm -rf " + dir).c_str());
}

TEST_F(ModelEntryEmitter, SameInputsSameBytes) {
  absl::StatusOr<std::string> first =
      EmitModelObject(kernels_, entry_, HostTarget(2));
  absl::StatusOr<std::string> second =
      EmitModelObject(kernels_, entry_, HostTarget(2));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second);
  // The constant is embedded.
  const std::string ones(reinterpret_cast<const char*>(ones_.data()), 32);
  EXPECT_NE(first->find(ones), std::string::npos);
}

// The text form is the module the object is made of: the copy of an input
// to an output (entry_.copies) is a memcpy of its bytes, and a bad entry is
// refused with EmitModelObject's error.
TEST_F(ModelEntryEmitter, ModuleIrIsTheObjectsModule) {
  absl::StatusOr<std::string> ir =
      ModelModuleIr(kernels_, entry_, HostTarget(1));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_NE(ir->find("define i32 @tiny(ptr"), std::string::npos) << *ir;
  EXPECT_NE(ir->find("define internal i32 @tiny_kernel_0("), std::string::npos);
  EXPECT_NE(ir->find("call void @llvm.memcpy.p0.p0.i64(ptr align 4 %output1, "
                     "ptr align 4 %input0, i64 32, i1 false)"),
            std::string::npos)
      << *ir;
  entry_.calls[1].kernel = 3;
  absl::StatusOr<std::string> bad =
      ModelModuleIr(kernels_, entry_, HostTarget(1));
  absl::StatusOr<std::string> bad_object =
      EmitModelObject(kernels_, entry_, HostTarget(1));
  ASSERT_FALSE(bad.ok());
  ASSERT_FALSE(bad_object.ok());
  EXPECT_EQ(bad.status(), bad_object.status());
}

TEST_F(ModelEntryEmitter, RefusesWhatDoesNotExist) {
  auto message = [&] {
    absl::StatusOr<std::string> object =
        EmitModelObject(kernels_, entry_, HostTarget(1));
    EXPECT_FALSE(object.ok());
    return std::string(object.status().message());
  };
  ModelEntry good = entry_;
  entry_.calls[1].kernel = 3;
  EXPECT_NE(message().find("call 1 names kernel 3 of 1"), std::string::npos);
  entry_ = good;
  entry_.calls[2].args.pop_back();
  EXPECT_NE(message().find("call 2 gives 2 arguments to kernel tiny_kernel_0, "
                           "which takes 3"),
            std::string::npos);
  entry_ = good;
  entry_.calls[1].args[2] = Arena(128);
  EXPECT_NE(message().find("call 1 reads arena offset 128, which does not "
                           "exist"),
            std::string::npos);
  entry_ = good;
  entry_.copies[0].from = In(1);
  EXPECT_NE(message().find("the copy to output 1 reads input 1"),
            std::string::npos);
  entry_ = good;
  entry_.function_name = "tiny_kernel_0";
  EXPECT_NE(message().find("a kernel has the entry's name"), std::string::npos);
}

}  // namespace
}  // namespace lathe

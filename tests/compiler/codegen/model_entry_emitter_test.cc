// Tests of compiler/codegen/llvm/model_entry_emitter.h: a model entry that
// chains a kernel through the arena, reads an embedded constant and copies
// an input to an output is built with the runtime into a .a linked into a C
// program, or a .so the program loads and unloads three times, and run;
// its constants are read from their copy on huge pages when they are 1 MiB
// to 512 MiB; bad entries are refused naming what is wrong; the bytes
// repeat.
#include "compiler/codegen/llvm/model_entry_emitter.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// Builds `entry` into a static archive linked into a C program (or a shared
// library the program loads with dlopen) and runs it; returns the program's
// output ("ok\n" when every value was right), or a message starting "FAIL".
std::string RunFromC(const std::vector<ObjectKernel>& kernels,
                     const ModelEntry& entry, bool shared) {
  absl::StatusOr<std::string> object =
      EmitModelObject(kernels, entry, HostTarget(1));
  if (!object.ok()) return "FAIL: " + std::string(object.status().message());
  char dir_template[] = "/tmp/lathe_model_entry_XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return "FAIL: mkdtemp";
  const std::string dir = dir_template;
  std::string library = dir + "/tiny.a";
  if (shared) {
    library = dir + "/libtiny.so";
    absl::Status linked =
        LinkSharedLibrary(*object, std::vector<std::string>{"tiny"}, library);
    if (!linked.ok()) return "FAIL: " + std::string(linked.message());
  } else {
    absl::StatusOr<std::string> archive = KernelStaticLibrary(*object, "tiny");
    if (!archive.ok())
      return "FAIL: " + std::string(archive.status().message());
    if (!WriteFileBytes(library, *archive).ok()) return "FAIL: write";
  }
  // The shared library is loaded, run and unloaded three times with
  // dlopen: its constants' copy (in its .bss) goes and comes with it.
  std::ofstream(dir + "/main.c") << R"(#include <dlfcn.h>
#include <stdio.h>
typedef int (*Entry)(const float* x, float* y, float* z);
#ifdef STATIC
int tiny(const float* x, float* y, float* z);
int tiny_kernel_0(const float* a, const float* b, float* c);
#pragma weak tiny_kernel_0
#endif
static int Check(Entry entry) {
  float x[8], y[8], z[8];
  int i, call;
  for (call = 0; call < 2; ++call) {
    for (i = 0; i < 8; ++i) { x[i] = (float)(i + call) - 3.0f; y[i] = z[i] = -1000.0f; }
    if (entry(x, y, z) != 0) return 3;
    for (i = 0; i < 8; ++i) {
      float want = ((x[i] + 1.0f) + (x[i] + 1.0f)) + 1.0f;
      if (y[i] != want || z[i] != x[i]) {
        printf("%d: y %f want %f, z %f want %f\n", i, y[i], want, z[i], x[i]);
        return 2;
      }
    }
  }
  return 0;
}
int main(int argc, char** argv) {
  int rc = 0;
#ifdef STATIC
  (void)argc; (void)argv;
  rc = Check(tiny);
  if (rc == 0 && tiny_kernel_0 != 0) { printf("the kernel is exported\n"); return 4; }
#else
  int load;
  if (argc < 2) return 6;
  for (load = 0; load < 3 && rc == 0; ++load) {
    void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) { printf("dlopen: %s\n", dlerror()); return 5; }
    if (dlsym(library, "tiny_kernel_0") != NULL) { printf("the kernel is exported\n"); return 4; }
    rc = Check((Entry)dlsym(library, "tiny"));
    dlclose(library);
  }
#endif
  if (rc == 0) printf("ok\n");
  return rc;
}
)";
  const std::string cmd =
      "cd " + dir + " && cc -o prog main.c " +
      (shared ? std::string("-ldl") : "-DSTATIC " + library) +
      " -lpthread -lm > cc.log 2>&1";
  if (std::system(cmd.c_str()) != 0) return "FAIL: cc; see " + dir + "/cc.log";
  const std::string run =
      dir + "/prog " + (shared ? library : "") + " > " + dir + "/out.txt 2>&1";
  const int rc = std::system(run.c_str());
  std::ifstream out(dir + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)),
                   std::istreambuf_iterator<char>());
  if (WEXITSTATUS(rc) != 0)
    text = "FAIL: exit " + std::to_string(WEXITSTATUS(rc)) + ": " + text;
  std::system(("rm -rf " + dir).c_str());
  return text;
}

bool HaveCc() { return std::system("command -v cc > /dev/null 2>&1") == 0; }

TEST_F(ModelEntryEmitter, RunsTheCallsInOrderFromC) {
  if (!HaveCc())
    GTEST_SKIP() << "no C compiler (cc) on PATH: linking not tested";
  EXPECT_EQ(RunFromC(kernels_, entry_, /*shared=*/false), "ok\n");
}

// Constants of 1 MiB or more are read from their copy on huge pages
// (lathe_model_constants), made by the first call into zero-initialized
// space of the library; each constant at its offset in the one image. A
// wrong offset or a copy not made would give the kernel other floats.
TEST_F(ModelEntryEmitter, AMebibyteOfConstantsIsReadFromItsCopy) {
  std::vector<float> big(size_t{1} << 18);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 7);
  entry_.constants = {{"big", big.data(), static_cast<int64_t>(big.size())},
                      {"ones", ones_.data(), 8}};
  for (EntryCall& call : entry_.calls) {
    for (EntryBuffer& arg : call.args) {
      if (arg.kind == EntryBuffer::Kind::kConstant) arg = Const(1);
    }
  }
  absl::StatusOr<std::string> ir =
      ModelModuleIr(kernels_, entry_, HostTarget(1));
  ASSERT_TRUE(ir.ok()) << ir.status();
  // 2^18 + 16 floats (the ones padded to 64 bytes); the space rounds the
  // image up to 2 MiB and adds 2 MiB.
  EXPECT_NE(ir->find("@tiny_constants_space = internal global [4194304 x i8] "
                     "zeroinitializer, align 64"),
            std::string::npos)
      << ir->substr(std::min(ir->find("@tiny_constants_space"), ir->size()),
                    200);
  EXPECT_NE(ir->find("%constants = call ptr @lathe_model_constants(ptr "
                     "@tiny_constants, ptr @tiny_constants_space, i64 "
                     "1048640, ptr @tiny_constants_at)"),
            std::string::npos);
  EXPECT_NE(ir->find("getelementptr inbounds float, ptr %constants, i64 "
                     "262144"),
            std::string::npos);
  if (!HaveCc())
    GTEST_SKIP() << "no C compiler (cc) on PATH: linking not tested";
  EXPECT_EQ(RunFromC(kernels_, entry_, /*shared=*/false), "ok\n");
  EXPECT_EQ(RunFromC(kernels_, entry_, /*shared=*/true), "ok\n");
}

// The copy is for images of 1 MiB to 512 MiB; each constant of the image
// takes a multiple of 64 bytes.
TEST(ModelEntryConstants, CopiedFromAMebibyteTo512MiB) {
  EXPECT_FALSE(ConstantsReadFromCopy((int64_t{1} << 20) - 64));
  EXPECT_TRUE(ConstantsReadFromCopy(int64_t{1} << 20));
  EXPECT_TRUE(ConstantsReadFromCopy(int64_t{512} << 20));
  EXPECT_FALSE(ConstantsReadFromCopy((int64_t{512} << 20) + 64));
  ModelEntry entry;
  std::vector<float> data(20, 1.0f);
  entry.constants = {
      {"a", data.data(), 1}, {"b", data.data(), 16}, {"c", data.data(), 17}};
  EXPECT_EQ(ConstantImageBytes(entry), 64 + 64 + 128);
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

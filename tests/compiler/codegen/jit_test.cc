// Tests of compiler/codegen/llvm/jit.h: hand-built lowered programs,
// JIT-compiled for this machine (and for narrower vector ISAs where it can
// run them), against the interpreter; the compile cache and compile times.
#include "compiler/codegen/llvm/jit.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace lathe {
namespace {

using ::lathe::testing::Host;
using ::lathe::testing::MakeAllocScope;
using ::lathe::testing::MakeLoweredProgram;
using ::lathe::testing::Matmul;
using ::lathe::testing::ScalarLoop;

// Float32 host arrays for a program's parameters, inputs random, outputs
// zero, with their TensorData twins for the interpreter.
struct KernelArgs {
  std::vector<TensorData> tensors;
  std::vector<std::vector<float>> arrays;

  explicit KernelArgs(const Program& program, uint64_t seed = 1) {
    std::vector<BufferPtr> params = program.Params();
    for (size_t i = 0; i < params.size(); ++i) {
      TensorData t = TensorData::Like(*params[i]);
      if (i < program.inputs.size()) FillRandom(&t, seed + i);
      tensors.push_back(t);
      arrays.emplace_back(t.values.begin(), t.values.end());
    }
  }
  std::vector<float*> Pointers() {
    std::vector<float*> out;
    for (auto& a : arrays) out.push_back(a.data());
    return out;
  }
  std::vector<TensorData*> TensorPointers() {
    std::vector<TensorData*> out;
    for (auto& t : tensors) out.push_back(&t);
    return out;
  }
};

// JIT-compiles the program for the target, runs it and the interpreter on the
// same inputs and compares every output.
void ExpectMatchesInterpreter(const Program& program, const Target& target,
                              double rtol = 1e-5, double atol = 1e-5) {
  SCOPED_TRACE(program.name + " on " + target.ToString());
  absl::StatusOr<CompiledKernel> kernel = Compile(program, target);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  KernelArgs args(program);
  ASSERT_EQ(kernel->Call(args.Pointers()), 0);
  absl::Status st = Interpret(program, args.TensorPointers());
  ASSERT_TRUE(st.ok()) << st;
  for (size_t i = program.inputs.size(); i < args.tensors.size(); ++i) {
    TensorData actual = args.tensors[i];
    for (int64_t e = 0; e < actual.size(); ++e)
      actual.values[e] = args.arrays[i][e];
    absl::Status close = CheckAllClose(actual, args.tensors[i], rtol, atol,
                                       program.Params()[i]->name);
    EXPECT_TRUE(close.ok()) << close;
  }
}

TEST(Jit, ScalarLoop) { ExpectMatchesInterpreter(ScalarLoop(37), Host()); }

TEST(Jit, MatmulOddAndPrimeExtents) {
  ExpectMatchesInterpreter(Matmul(17, 23, 19), Host(), 1e-4, 1e-4);
  ExpectMatchesInterpreter(Matmul(1, 1, 1), Host());
  ExpectMatchesInterpreter(Matmul(31, 64, 7), Host(), 1e-4, 1e-4);
}

TEST(Jit, VectorizedLoopWithTail) {
  ExpectMatchesInterpreter(ScalarLoop(13, ForKind::kVectorized), Host());
  ExpectMatchesInterpreter(ScalarLoop(3, ForKind::kVectorized), Host());
  ExpectMatchesInterpreter(Matmul(5, 13, 11, ForKind::kVectorized), Host(),
                           1e-4, 1e-4);
  ExpectMatchesInterpreter(Matmul(4, 67, 9, ForKind::kVectorized), Host(), 1e-4,
                           1e-4);
}

TEST(Jit, UnrolledLoops) {
  ExpectMatchesInterpreter(ScalarLoop(4, ForKind::kUnrolled), Host());
  ExpectMatchesInterpreter(ScalarLoop(100, ForKind::kUnrolled),
                           Host());  // beyond inline unrolling
  ExpectMatchesInterpreter(
      Matmul(6, 16, 5, ForKind::kVectorized, ForKind::kUnrolled), Host(), 1e-4,
      1e-4);
}

TEST(Jit, NarrowerVectorTargets) {
  // Never assume AVX-512: the same kernels for AVX2 and SSE2 machines, run
  // here whenever this machine has what they need.
  for (const char* text :
       {"llvm -mcpu=haswell", "llvm -mcpu=x86-64", "llvm -mcpu=x86-64-v3"}) {
    absl::StatusOr<Target> t = ParseTarget(text);
    ASSERT_TRUE(t.ok()) << t.status();
    if (!CheckRunnableHere(*t).ok()) {
      std::printf("skipping %s: %s\n", text,
                  std::string(CheckRunnableHere(*t).message()).c_str());
      continue;
    }
    ExpectMatchesInterpreter(Matmul(7, 29, 13, ForKind::kVectorized), *t, 1e-4,
                             1e-4);
  }
}

TEST(Jit, IfAndFloorSemantics) {
  // B[i] = i % 3 == 0 ? A[i] : -A[i], plus floor division and modulo of
  // negative values: (i - 10) // 3 and (i - 10) % 4.
  const int64_t n = 23;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {n});
  Expr i = Var("i");
  std::vector<StmtPtr> body;
  body.push_back(MakeIf(FloorMod(i, 3) == 0, MakeStore(b, {i}, Load(a, {i})),
                        MakeStore(b, {i}, Expr(0.0) - Load(a, {i}))));
  Expr shifted = i - 10;
  body.push_back(
      MakeStore(c, {i},
                Cast(DType::Float32(), FloorDiv(shifted, 3)) * Expr(10.0) +
                    Cast(DType::Float32(), FloorMod(shifted, 4))));
  body.push_back(MakeIf(i < 5, MakeStore(c, {i}, Load(c, {i}) + Expr(100.0))));
  ExpectMatchesInterpreter(
      MakeLoweredProgram("if_floor", {a}, {b, c},
                         MakeFor(i, n, MakeSeq(std::move(body)))),
      Host());
}

TEST(Jit, MathFunctionsAndMinMax) {
  const int64_t n = 19;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n, 8});
  Expr i = Var("i");
  Expr x = Load(a, {i});
  std::vector<StmtPtr> body;
  body.push_back(MakeStore(b, {i, 0}, Call("exp", {x}, DType::Float32())));
  body.push_back(MakeStore(b, {i, 1}, Call("tanh", {x}, DType::Float32())));
  body.push_back(MakeStore(
      b, {i, 2},
      Call("sqrt", {Call("abs", {x}, DType::Float32())}, DType::Float32())));
  body.push_back(
      MakeStore(b, {i, 3}, Call("log", {x * x + Expr(1.0)}, DType::Float32())));
  body.push_back(MakeStore(b, {i, 4}, Min(x, Expr(0.25))));
  body.push_back(MakeStore(b, {i, 5}, Max(x, Expr(0.0)) / Expr(3.0)));
  body.push_back(MakeStore(b, {i, 6}, Call("erf", {x}, DType::Float32())));
  body.push_back(MakeStore(
      b, {i, 7},
      Call("pow", {Call("abs", {x}, DType::Float32()), x}, DType::Float32())));
  Program p = MakeLoweredProgram(
      "math", {a}, {b},
      MakeFor(i, n, MakeSeq(std::move(body)), ForKind::kVectorized));
  ExpectMatchesInterpreter(p, Host(), 1e-5, 1e-6);
}

// erf and pow in a vectorized loop whose stores are unit-stride (the loop
// that would become explicit vector IR if calls were vectorizable), and in
// a serial one.
TEST(Jit, ErfAndPowInVectorizedAndSerialLoops) {
  const int64_t n = 64;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {n});
  for (ForKind kind : {ForKind::kVectorized, ForKind::kSerial}) {
    Expr i = Var("i");
    Expr x = Load(a, {i});
    std::vector<StmtPtr> body;
    body.push_back(
        MakeStore(b, {i}, Call("erf", {x * Expr(2.0)}, DType::Float32())));
    body.push_back(MakeStore(
        c, {i},
        Call("pow", {x * x + Expr(0.5), Expr(0.75)}, DType::Float32()) + x));
    Program p = MakeLoweredProgram(
        "erf_pow", {a}, {b, c}, MakeFor(i, n, MakeSeq(std::move(body)), kind));
    ExpectMatchesInterpreter(p, Host(), 1e-5, 1e-6);
  }
}

// Y[i] = 1 <= i <= n ? X[i - 1] : 0 over i in [0, n + 2), with X placed so
// that X[-1] and X[n] lie on unmapped pages: an eager load would crash.
void RunPaddingOverGuardPages(ForKind kind) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t n = page / 4;
  BufferPtr x = MakeBuffer("X", DType::Float32(), {n});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {n + 2});
  Expr i = Var("i");
  Program p = MakeLoweredProgram(
      "pad", {x}, {y},
      MakeFor(i, n + 2,
              MakeStore(y, {i},
                        Select(i >= 1 && i <= n, Load(x, {i - 1}), Expr(0.0))),
              kind));
  absl::StatusOr<CompiledKernel> kernel = Compile(p, Host());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  char* mem = static_cast<char*>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem, page, PROT_NONE), 0);
  ASSERT_EQ(mprotect(mem + 2 * page, page, PROT_NONE), 0);
  float* xs = reinterpret_cast<float*>(mem + page);
  for (int64_t e = 0; e < n; ++e) xs[e] = static_cast<float>(e + 1);
  std::vector<float> ys(n + 2, -1.0f);
  ASSERT_EQ(kernel->Call({xs, ys.data()}), 0);
  EXPECT_EQ(ys[0], 0.0f);
  EXPECT_EQ(ys[n + 1], 0.0f);
  for (int64_t e = 1; e <= n; ++e) ASSERT_EQ(ys[e], static_cast<float>(e)) << e;
  munmap(mem, 3 * page);
}

TEST(Jit, SelectGuardsOutOfBoundsLoad) {
  RunPaddingOverGuardPages(ForKind::kSerial);
}
TEST(Jit, VectorizedSelectGuardsOutOfBoundsLoad) {
  RunPaddingOverGuardPages(ForKind::kVectorized);
}

TEST(Jit, ShortCircuitAndGuardsLoad) {
  // Y[i] = (i < n && X[i] > 0) ? 1 : 2 over i in [0, n + 3).
  const int64_t n = 10;
  BufferPtr x = MakeBuffer("X", DType::Float32(), {n});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {n + 3});
  Expr i = Var("i");
  Program p = MakeLoweredProgram(
      "andor", {x}, {y},
      MakeFor(
          i, n + 3,
          MakeStore(y, {i},
                    Select((i < n && Load(x, {i}) > Expr(0.0)) || i == n + 2,
                           Expr(1.0), Expr(2.0)))));
  ExpectMatchesInterpreter(p, Host());
}

TEST(Jit, LocalBuffersOnStackAndHeap) {
  // Per row i: T[j] = A[i, j] * 2 in a scope-local buffer, then
  // B[i, j] = T[n - 1 - j] + S[j], where S (root, > 64 KiB: heap) holds j *
  // 0.5.
  const int64_t m = 9, n = 20000;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {m, n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {m, n});
  BufferPtr s = MakeBuffer("S", DType::Float32(), {n});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {n}, BufferScope::kLocal);
  BufferPtr small = MakeBuffer("U", DType::Float32(), {4}, BufferScope::kLocal);
  Expr i = Var("i"), j = Var("j"), j2 = Var("j2"), j0 = Var("j0"), u = Var("u");
  std::vector<StmtPtr> root;
  root.push_back(MakeFor(
      j0, n, MakeStore(s, {j0}, Cast(DType::Float32(), j0) * Expr(0.5))));
  std::vector<StmtPtr> row;
  row.push_back(MakeFor(j, n, MakeStore(t, {j}, Load(a, {i, j}) * Expr(2.0)),
                        ForKind::kVectorized));
  row.push_back(MakeFor(u, 4, MakeStore(small, {u}, Load(t, {u}))));
  row.push_back(MakeFor(j2, n,
                        MakeStore(b, {i, j2},
                                  Load(t, {Expr(n - 1) - j2}) + Load(s, {j2}) +
                                      Load(small, {FloorMod(j2, 4)}))));
  root.push_back(MakeFor(
      i, m, MakeAllocScope("scope", {t, small}, MakeSeq(std::move(row)))));
  Program p =
      MakeLoweredProgram("locals", {a}, {b}, MakeSeq(std::move(root)), {s});
  absl::StatusOr<std::string> ir =
      GenerateLLVMIR(p, Host(), {}, /*optimize=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir,
              ::testing::HasSubstr("call ptr @lathe_alloc(i64 80000, i64 64)"));
  EXPECT_THAT(*ir, ::testing::HasSubstr("alloca [4 x float], align 64"));
  ExpectMatchesInterpreter(p, Host());
}

TEST(Jit, ParallelLoopsAtOneAndTwoThreads) {
  // Parallel over rows with an outer serial loop captured by the closure,
  // a nested local buffer inside the outlined body, and a parallel matmul.
  const int64_t o = 3, m = 11, n = 37;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {o, m, n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {o, m, n});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {n}, BufferScope::kLocal);
  Expr q = Var("q"), i = Var("i"), j = Var("j"), j2 = Var("j2");
  std::vector<StmtPtr> row;
  row.push_back(MakeFor(
      j, n,
      MakeStore(t, {j},
                Load(a, {q, i, j}) + Cast(DType::Float32(), q * 10 + i))));
  row.push_back(MakeFor(j2, n,
                        MakeStore(b, {q, i, j2}, Load(t, {j2}) * Expr(3.0)),
                        ForKind::kVectorized));
  Program p = MakeLoweredProgram(
      "par", {a}, {b},
      MakeFor(q, o,
              MakeFor(i, m, MakeAllocScope("row", {t}, MakeSeq(std::move(row))),
                      ForKind::kParallel)));
  for (int threads : {1, 2}) {
    ExpectMatchesInterpreter(p, Host(threads));
    ExpectMatchesInterpreter(
        Matmul(13, 24, 9, ForKind::kVectorized, ForKind::kParallel),
        Host(threads), 1e-4, 1e-4);
  }
  absl::StatusOr<std::string> ir =
      GenerateLLVMIR(p, Host(2), {}, /*optimize=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, ::testing::HasSubstr("call i32 @lathe_parallel_for(i64 11"));
  absl::StatusOr<std::string> serial =
      GenerateLLVMIR(p, Host(1), {}, /*optimize=*/false);
  ASSERT_TRUE(serial.ok());
  EXPECT_THAT(*serial,
              ::testing::Not(::testing::HasSubstr("lathe_parallel_for")));
}

TEST(Jit, RefusesTargetsThisMachineCannotRun) {
  Target t = Host();
  t.features.push_back("+lathe-imaginary-feature");
  absl::StatusOr<CompiledKernel> k = Compile(ScalarLoop(8), t);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(k.status().message()),
              ::testing::HasSubstr("lathe-imaginary-feature"));
}

TEST(Jit, CacheReturnsTheSameKernel) {
  Program p = ScalarLoop(29);
  absl::StatusOr<CompiledKernel> first = Compile(p, Host());
  ASSERT_TRUE(first.ok()) << first.status();
  int64_t compiled = NumJitCompilations();
  absl::StatusOr<CompiledKernel> second = Compile(p, Host());
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache());
  EXPECT_EQ(second->function(), first->function());
  EXPECT_EQ(NumJitCompilations(), compiled);
  // Another target string is another kernel.
  absl::StatusOr<CompiledKernel> other = Compile(p, Host(2));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->from_cache());
}

TEST(Jit, CompileTimePerKernel) {
  // Not a benchmark: prints the split so regressions are visible in logs.
  std::vector<double> totals;
  CompileTimes last;
  for (int r = 0; r < 7; ++r) {
    CodegenOptions options;
    options.function_name = "timed_" + std::to_string(r);  // defeats the cache
    absl::StatusOr<CompiledKernel> k =
        Compile(Matmul(64, 64, 64, ForKind::kVectorized, ForKind::kParallel),
                Host(2), options);
    ASSERT_TRUE(k.ok()) << k.status();
    totals.push_back(k->times().total_ms());
    last = k->times();
  }
  std::sort(totals.begin(), totals.end());
  std::printf(
      "matmul 64^3 compile: median %.1f ms (last: codegen %.1f, O3 %.1f, "
      "machine code %.1f, link %.1f)\n",
      totals[totals.size() / 2], last.codegen_ms, last.optimize_ms,
      last.machine_code_ms, last.link_ms);
}

}  // namespace
}  // namespace lathe

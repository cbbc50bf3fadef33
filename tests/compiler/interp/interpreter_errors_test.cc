// Tests of compiler/interp/interpreter.h: the bugs of programs it must
// catch, and the wrong arguments and malformed programs it rejects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "tests/compiler/interp/interpreter_programs.h"

namespace lathe {
namespace {

using interp_testing::Elementwise;
using interp_testing::ElementwiseSpec;
using interp_testing::Filled;
using interp_testing::MakeBlock;
using interp_testing::MakeProgram;
using interp_testing::Matmul;
using interp_testing::NestedLocalAlloc;
using ::testing::HasSubstr;

// ---- Bugs the interpreter must catch ---------------------------------------

TEST(Interpreter, ReductionWithoutInitReadsBeforeWrite) {
  Program p = Matmul(4, 4, 4);
  p.FindBlock("C")->init = nullptr;
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  TensorData c = TensorData::Like(*p.outputs[0]);
  absl::Status s = Interpret(p, {&a, &b, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "read of C[0, 0] before it was written, in block C");
}

TEST(Interpreter, InitRunsOnlyWhenEveryReduceVariableIsZero) {
  // Reordering k outside i: every (i, j) is initialized at k == 0, and later
  // k accumulate: the result is still the matmul.
  Program p = Matmul(3, 2, 4);
  ForNode* i = p.FindLoop("i");
  ForNode* k = p.FindLoop("k");
  std::swap(i->var, k->var);
  std::swap(i->extent, k->extent);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  FillRandom(&a, 7);
  FillRandom(&b, 8);
  TensorData c = TensorData::Like(*p.outputs[0]);
  TensorData expected = TensorData::Like(*p.outputs[0]);
  Program ref = Matmul(3, 2, 4);
  ASSERT_TRUE(Interpret(ref, {&a, &b, &expected}).ok());
  ASSERT_TRUE(Interpret(p, {&a, &b, &c}).ok()) << PrintProgram(p);
  for (size_t e = 0; e < c.values.size(); ++e)
    EXPECT_FLOAT_EQ(c.values[e], expected.values[e]);
}

TEST(Interpreter, OutOfBoundsLoad) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  ElementwiseSpec spec;
  spec.value = [&](const Expr& vi) { return Load(a, {vi + 1}); };
  Program p = Elementwise(a, b, spec);
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "load of A[4] outside shape [4], in block B");
}

TEST(Interpreter, OutOfBoundsStore) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {2, 3});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {2, 3});
  Expr i = Var("i"), vi = Var("vi");
  auto block = MakeBlock("B", {{vi, 2, IterType::kSpatial}}, {i},
                         MakeStore(b, {vi, vi * 3 - 1}, Expr(1.0)));
  Program p = MakeProgram("f", {a}, {b}, MakeFor(i, 2, std::move(block)));
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "store to B[0, -1] outside shape [2, 3], in block B");
}

TEST(Interpreter, StoreToInput) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  Expr i = Var("i"), vi = Var("vi");
  std::vector<StmtPtr> body;
  body.push_back(MakeStore(b, {vi}, Expr(1.0)));
  body.push_back(MakeStore(a, {vi}, Expr(1.0)));
  auto block = MakeBlock("B", {{vi, 4, IterType::kSpatial}}, {i},
                         MakeSeq(std::move(body)));
  Program p = MakeProgram("f", {a}, {b}, MakeFor(i, 4, std::move(block)));
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "store to input A[0], in block B");
  EXPECT_EQ(ad.values, (std::vector<double>{0, 0, 0, 0}));
}

TEST(Interpreter, IterationValueOutsideItsExtent) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {8});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {8});
  ElementwiseSpec spec;
  spec.loop_extent = 8;
  spec.iter_extent = 4;  // a bad split: the binding reaches 7
  spec.value = [&](const Expr& vi) { return Load(a, {vi}); };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 1, 1, 1, 1, 1, 1, 1});
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "block B: iteration variable vi = 4 outside [0, 4)");
  // Execution stopped at the first error, after the first four instances.
  EXPECT_EQ(bd.values, (std::vector<double>{1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(Interpreter, DivisionByZeroIsAnError) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  ElementwiseSpec spec;
  spec.value = [&](const Expr& vi) {
    return Load(a, {FloorMod(vi + 4, vi - 1)});
  };
  // vi = 0: 4 % -1 = 0; vi = 1: modulo by zero.
  Program p = Elementwise(a, b, spec);
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("division by zero in "));
  EXPECT_THAT(s.message(), HasSubstr(", in block B"));
}

TEST(Interpreter, RejectsWrongArguments) {
  Program p = Matmul(2, 3, 4);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  TensorData c = TensorData::Like(*p.outputs[0]);
  TensorData bad_shape(DType::Float32(), {3, 2});
  TensorData bad_dtype(DType::Int32(), {2, 3});

  absl::Status s = Interpret(p, {&a, &b});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "interpret matmul: expected 3 arguments (A, B, C), got 2");

  s = Interpret(p, {&a, &b, &bad_shape});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "interpret matmul: argument 2 (C) has shape [3, 2], expected [2, 3]");

  s = Interpret(p, {&a, &b, &bad_dtype});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 2 (C) has dtype int32, expected float32"));

  s = Interpret(p, {&a, &a, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  a.values[3] = 0.1;  // not a float32
  s = Interpret(p, {&a, &b, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 0 (A): value 0.1 at flat index 3"));
}

TEST(Interpreter, RejectsMalformedPrograms) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {4});
  Expr stray = Var("stray");
  struct Case {
    std::function<Expr(const Expr&)> value;
    std::string message;
  };
  std::vector<Case> cases = {
      {[&](const Expr& vi) { return Load(a, {stray}) + Load(a, {vi}); },
       "variable stray is used outside its scope, in block B"},
      {[&](const Expr& vi) { return Load(t, {vi}); },
       "load from buffer T, which is neither a parameter nor allocated by an "
       "enclosing "
       "block, in block B"},
      {[&](const Expr& vi) {
         return Call("gamma", {Load(a, {vi})}, DType::Float32());
       },
       "unknown function gamma"},
  };
  for (const Case& c : cases) {
    ElementwiseSpec spec;
    spec.value = c.value;
    Program p = Elementwise(a, b, spec);
    absl::StatusOr<Interpreter> interp = Interpreter::Compile(p);
    ASSERT_FALSE(interp.ok()) << c.message;
    EXPECT_EQ(interp.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(interp.status().message(), HasSubstr(c.message));
  }
  // A block's iteration variable is not visible after the block.
  Expr i = Var("i"), vi = Var("vi");
  std::vector<StmtPtr> body;
  body.push_back(MakeBlock("B", {{vi, 4, IterType::kSpatial}}, {i},
                           MakeStore(b, {vi}, Expr(1.0))));
  body.push_back(MakeStore(b, {vi}, Expr(2.0)));
  Program p =
      MakeProgram("f", {a}, {b}, MakeFor(i, 4, MakeSeq(std::move(body))));
  EXPECT_THAT(
      Interpreter::Compile(p).status().message(),
      HasSubstr("variable vi is used outside its scope, in block root"));
}

TEST(Interpreter, RejectsABufferAllocatedTwice) {
  Program p = NestedLocalAlloc(/*write_t_only_first_time=*/false);
  p.root->alloc_buffers = p.FindBlock("outer")->alloc_buffers;
  absl::Status s = Interpreter::Compile(p).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      s.message(),
      HasSubstr("buffer T is allocated here but is already a parameter or "
                "allocated by another block, in block outer"));
}

}  // namespace
}  // namespace lathe

#include "compiler/workload/custom_workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/workload/expr_parser.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

std::string ErrorOf(const std::string& expr, const std::string& dims) {
  absl::StatusOr<Workload> w = ParseCustomWorkload(expr, dims);
  EXPECT_FALSE(w.ok()) << expr << " | " << dims << " was accepted";
  if (w.ok()) return "";
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(w.status().message());
}

TEST(CustomWorkload, Matmul) {
  absl::StatusOr<Workload> w =
      ParseCustomWorkload("C[i,j] += A[i,k] * B[k,j]", "i=512,j=256,k=128");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->is_custom());
  EXPECT_EQ(w->op(), "custom");
  ASSERT_EQ(w->inputs().size(), 2u);
  EXPECT_EQ(w->inputs()[0].name(), "A");
  EXPECT_EQ(w->inputs()[0].shape(), (Shape{512, 128}));
  EXPECT_EQ(w->inputs()[1].shape(), (Shape{128, 256}));
  ASSERT_EQ(w->outputs().size(), 1u);
  EXPECT_EQ(w->outputs()[0].shape(), (Shape{512, 256}));
  EXPECT_EQ(w->CanonicalForm(),
            "custom:C[i,j] += A[i,k] * B[k,j]|i=512,j=256,k=128");
  EXPECT_EQ(w->params(), (std::map<std::string, std::string>{
                             {"i", "512"}, {"j", "256"}, {"k", "128"}}));
  // The same loop program as the registry's matmul.
  Workload registry = *ParseWorkloadSpec("matmul:M=512,N=256,K=128");
  EXPECT_TRUE(StructuralEqual(*w->InitialProgram(), *registry.InitialProgram()))
      << PrintProgram(*w->InitialProgram());
}

TEST(CustomWorkload, GoldenKey) {
  EXPECT_EQ(
      ParseCustomWorkload("C[i,j] += A[i,k] * B[k,j]", "i=512,j=512,k=512")
          ->Key(),
      "2333fbeb34d4f4fb");
}

TEST(CustomWorkload, SpellingDoesNotChangeTheKey) {
  const std::string key =
      ParseCustomWorkload("C[i,j] += A[i,k] * B[k,j]", "i=64,j=64,k=32")->Key();
  EXPECT_EQ(
      ParseCustomWorkload("C[i,j]+=A[i,k]*B[k,j];", "k=32, j=64,i=064")->Key(),
      key);
  EXPECT_EQ(ParseCustomWorkload("C[i,j] += (A[i,k] * B[k,j])", "i=64,j=64,k=32")
                ->Key(),
            key);
  // A different computation, a different key.
  EXPECT_NE(
      ParseCustomWorkload("C[i,j] += B[k,j] * A[i,k]", "i=64,j=64,k=32")->Key(),
      key);
  EXPECT_NE(
      ParseCustomWorkload("C[i,j] += A[i,k] * B[k,j]", "i=64,j=64,k=16")->Key(),
      key);
}

TEST(CustomWorkload, CanonicalFormIsASpec) {
  for (auto [expr, dims] : std::vector<std::pair<std::string, std::string>>{
           {"C[i,j] += A[i,k]*B[k,j]; D[i,j] = max(C[i,j], 0)", "i=4,j=5,k=3"},
           {"Y[n,k,p,q] += X[n,c,2*p+r,2*q+s] * W[k,c,r,s]",
            "n=1,k=2,p=3,q=3,c=2,r=3,s=3"},
           {"Y[i] = -X[5-i] / (1 + exp(-X[i]))", "i=6"}}) {
    Workload w = *ParseCustomWorkload(expr, dims);
    absl::StatusOr<Workload> again = ParseWorkloadSpec(w.CanonicalForm());
    ASSERT_TRUE(again.ok()) << w.CanonicalForm() << ": " << again.status();
    EXPECT_EQ(again->CanonicalForm(), w.CanonicalForm());
    EXPECT_EQ(again->Key(), w.Key());
    EXPECT_TRUE(StructuralEqual(*w.InitialProgram(), *again->InitialProgram()));
  }
}

TEST(CustomWorkload, ASpecParsesToTheDefinitionItPrints) {
  Workload w = *ParseCustomWorkload(
      "T[i,j] += A[i,k] * B[k,j]; C[i,j] = max(T[i,j], 0)", "i=4,j=5,k=3");
  for (const std::string& spec :
       {w.CanonicalForm(), w.CanonicalForm().substr(7)}) {
    absl::StatusOr<CustomDefinition> def = ParseCustomSpec(spec);
    ASSERT_TRUE(def.ok()) << spec << ": " << def.status();
    EXPECT_EQ(def->dims,
              (std::map<std::string, int64_t>{{"i", 4}, {"j", 5}, {"k", 3}}));
    ASSERT_EQ(def->parsed.statements.size(), 2u);
    EXPECT_EQ(def->parsed.statements.back().output, "C");
    EXPECT_EQ(MakeCustomWorkload(*std::move(def))->Key(), w.Key());
  }
  absl::Status no_dims = ParseCustomSpec("custom:C[i] = A[i]").status();
  EXPECT_EQ(no_dims.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_dims.message(), HasSubstr("\"custom:C[i] = A[i]\""));
  EXPECT_THAT(no_dims.message(), HasSubstr("custom:EXPR|DIMS"));
  EXPECT_THAT(ParseCustomSpec("custom:C[i] = A[i]|j=3").status().message(),
              HasSubstr("j"));
}

TEST(CustomWorkload, EpilogueIsAFurtherStage) {
  Workload w = *ParseCustomWorkload(
      "C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)", "i=8,j=8,k=4");
  ASSERT_EQ(w.outputs().size(), 1u);
  EXPECT_EQ(w.outputs()[0].name(), "D");
  Program p = *w.InitialProgram();
  ASSERT_EQ(p.Blocks().size(), 2u);
  EXPECT_EQ(p.Blocks()[0]->name, "C");
  EXPECT_EQ(p.Blocks()[1]->name, "D");
  ASSERT_EQ(p.root->alloc_buffers.size(), 1u);
  EXPECT_EQ(p.root->alloc_buffers[0]->name, "C");
  const CustomDefinition& def = *w.custom();
  ASSERT_EQ(def.tensors.size(), 4u);
  EXPECT_EQ(def.tensors[2].role, CustomTensor::Role::kIntermediate);
  EXPECT_EQ(def.tensors[3].role, CustomTensor::Role::kOutput);
}

TEST(CustomWorkload, InputsInOrderOfFirstAppearanceWithInferredShapes) {
  Workload w =
      *ParseCustomWorkload("Y[n,k,p,q] += X[n,c,2*p+r,2*q+s] * W[k,c,r,s]",
                           "n=1,k=8,p=4,q=5,c=3,r=3,s=2");
  ASSERT_EQ(w.inputs().size(), 2u);
  EXPECT_EQ(w.inputs()[0].name(), "X");
  // 2*(4-1)+(3-1)+1 = 9 and 2*(5-1)+(2-1)+1 = 10.
  EXPECT_EQ(w.inputs()[0].shape(), (Shape{1, 3, 9, 10}));
  EXPECT_EQ(w.inputs()[1].shape(), (Shape{8, 3, 3, 2}));
  // The widest access decides: A[i] and A[i+2] make A 6 long for i=4.
  EXPECT_EQ(
      ParseCustomWorkload("Y[i] = A[i] + A[i+2]", "i=4")->inputs()[0].shape(),
      (Shape{6}));
  EXPECT_EQ(ParseCustomWorkload("Y[i] = B[j] ; Z[i] = Y[i] + A[i]", "i=4,j=2")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);  // j only on the right of '='
  Workload two =
      *ParseCustomWorkload("T[i] = B[i] * 2; Z[i] = T[i] + A[i]", "i=4");
  EXPECT_EQ(two.inputs()[0].name(), "B");
  EXPECT_EQ(two.inputs()[1].name(), "A");
}

TEST(CustomWorkload, ReductionAxesInOrderOfFirstAppearance) {
  Workload w =
      *ParseCustomWorkload("Y[i] max= X[i,r,s] * W[s,r]", "i=2,r=3,s=4");
  Program p = *w.InitialProgram();
  EXPECT_THAT(PrintProgram(p),
              HasSubstr("vr = reduce(3, r), vs = reduce(4, s)"));
}

constexpr char kConvBiasRelu[] =
    "input X[1,4,6,6]; input W[8,4,3,3]; input B[8]; "
    "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
    "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0)";
constexpr char kConvDims[] = "n=1,k=8,p=6,q=6,c=4,r=3,s=3";

TEST(CustomWorkload, DeclaredInputsComeFirstInDeclarationOrder) {
  Workload w = *ParseCustomWorkload(
      "input W[8,3,3,2]; Y[n,k,p,q] += X[n,c,2*p+r,2*q+s] * W[k,c,r,s] + "
      "V[k]",
      "n=1,k=8,p=4,q=5,c=3,r=3,s=2");
  ASSERT_EQ(w.inputs().size(), 3u);
  EXPECT_EQ(w.inputs()[0].name(), "W");
  EXPECT_EQ(w.inputs()[0].shape(), (Shape{8, 3, 3, 2}));
  EXPECT_EQ(w.inputs()[1].name(), "X");
  EXPECT_EQ(w.inputs()[1].shape(), (Shape{1, 3, 9, 10}));
  EXPECT_EQ(w.inputs()[2].name(), "V");
  // A declared extent may exceed what is read.
  Workload wide = *ParseCustomWorkload("input X[10]; Y[i] = X[i+2]", "i=4");
  EXPECT_EQ(wide.inputs()[0].shape(), (Shape{10}));
  const CustomTensor* x = wide.custom()->FindTensor("X");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->declared);
  EXPECT_FALSE(x->IsPadded());
  // The declarations are part of the canonical form and of the key.
  EXPECT_EQ(wide.CanonicalForm(), "custom:input X[10]; Y[i] = X[i+2]|i=4");
  EXPECT_NE(wide.Key(), ParseCustomWorkload("Y[i] = X[i+2]", "i=4")->Key());
  EXPECT_NE(wide.Key(),
            ParseCustomWorkload("input X[11]; Y[i] = X[i+2]", "i=4")->Key());
}

TEST(CustomWorkload, PaddedReadsGoThroughAPaddingStage) {
  Workload w = *ParseCustomWorkload(kConvBiasRelu, kConvDims);
  ASSERT_EQ(w.inputs().size(), 3u);
  EXPECT_EQ(w.inputs()[0].shape(), (Shape{1, 4, 6, 6}));
  EXPECT_EQ(w.inputs()[1].shape(), (Shape{8, 4, 3, 3}));
  EXPECT_EQ(w.inputs()[2].shape(), (Shape{8}));
  const CustomTensor* x = w.custom()->FindTensor("X");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->pad_before, (Shape{0, 0, 1, 1}));
  EXPECT_EQ(x->pad_after, (Shape{0, 0, 1, 1}));
  Program p = *w.InitialProgram();
  ASSERT_EQ(p.Blocks().size(), 3u) << PrintProgram(p);
  EXPECT_EQ(p.Blocks()[0]->name, "X_pad");
  EXPECT_EQ(p.Blocks()[1]->name, "Y");
  EXPECT_EQ(p.Blocks()[2]->name, "Z");
  const std::string text = PrintProgram(p);
  // The padding stage selects on the bounds; the conv reads it shifted.
  EXPECT_THAT(text, HasSubstr("select("));
  EXPECT_THAT(text, HasSubstr("X_pad[vn, vc, vp + vr, vq + vs]")) << text;
  // The registry's conv2d with pad=1 has the same padded extents.
  Workload registry =
      *ParseWorkloadSpec("conv2d_nchw:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1");
  EXPECT_EQ(p.root->alloc_buffers[0]->shape,
            registry.InitialProgram()->root->alloc_buffers[0]->shape);
}

TEST(CustomWorkload, PaddingOnlyWhereReadsLeaveTheInput) {
  // Padded reads inside the input read it directly: no stage.
  Workload inside = *ParseCustomWorkload("input X[6]; Y[i] = X?[i+1]", "i=4");
  EXPECT_EQ(inside.InitialProgram()->Blocks().size(), 1u);
  // One side and one dimension only, the farthest read deciding.
  Workload one = *ParseCustomWorkload(
      "input X[3,5]; Y[i,j] = X?[i,j+1] + X?[i,j+2]", "i=3,j=5");
  const CustomTensor* x = one.custom()->FindTensor("X");
  EXPECT_EQ(x->pad_before, (Shape{0, 0}));
  EXPECT_EQ(x->pad_after, (Shape{0, 2}));
  EXPECT_EQ(one.InitialProgram()->root->alloc_buffers[0]->shape, (Shape{3, 7}));
  // The stage's name avoids the tensors' names.
  Workload named = *ParseCustomWorkload(
      "input X[4]; X_pad[i] = X?[i-1]; Y[i] = X_pad[i]", "i=4");
  EXPECT_EQ(named.InitialProgram()->Blocks()[0]->name, "X_pad2");
}

TEST(CustomWorkload, DeclarationsKeepTheirCanonicalFormAsASpec) {
  for (auto [expr, dims] : std::vector<std::pair<std::string, std::string>>{
           {kConvBiasRelu, kConvDims},
           {"input X[1,3,5,7] pad -3.4028234663852886e+38; "
            "Y[n,c,p,q] max= X?[n,c,2*p+r-1,2*q+s-1]",
            "n=1,c=3,p=3,q=4,r=3,s=3"},
           {"Y[i] = select(ge(X[i], 0), erf(X[i]), pow(X[i], 2))", "i=5"}}) {
    Workload w = *ParseCustomWorkload(expr, dims);
    absl::StatusOr<Workload> again = ParseWorkloadSpec(w.CanonicalForm());
    ASSERT_TRUE(again.ok()) << w.CanonicalForm() << ": " << again.status();
    EXPECT_EQ(again->CanonicalForm(), w.CanonicalForm());
    EXPECT_EQ(again->Key(), w.Key());
    EXPECT_TRUE(StructuralEqual(*w.InitialProgram(), *again->InitialProgram()));
  }
  EXPECT_EQ(ParseCustomWorkload(kConvBiasRelu, kConvDims)->CanonicalForm(),
            "custom:input X[1,4,6,6]; input W[8,4,3,3]; input B[8]; "
            "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
            "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0.0)|c=4,k=8,n=1,p=6,q=6,"
            "r=3,s=3");
}

// A `const` input is layout-free: the workload says so per input and in its
// initial program, and its canonical form and key differ from those of the
// same computation whose weights arrive at run time.
TEST(CustomWorkload, ConstInputsAreLayoutFreeAndChangeTheKey) {
  const std::string dims = "i=8,j=16,k=4";
  Workload marked = *ParseCustomWorkload(
      "input A[8,4]; input B[4,16] const; C[i,j] += A[i,k] * B[k,j]", dims);
  Workload unmarked = *ParseCustomWorkload(
      "input A[8,4]; input B[4,16]; C[i,j] += A[i,k] * B[k,j]", dims);
  EXPECT_EQ(marked.CanonicalForm(),
            "custom:input A[8,4]; input B[4,16] const; "
            "C[i,j] += A[i,k] * B[k,j]|i=8,j=16,k=4");
  EXPECT_NE(marked.Key(), unmarked.Key());
  absl::StatusOr<Workload> again = ParseWorkloadSpec(marked.CanonicalForm());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->Key(), marked.Key());
  EXPECT_FALSE(marked.IsLayoutFreeInput(0));
  EXPECT_TRUE(marked.IsLayoutFreeInput(1));
  EXPECT_FALSE(marked.IsLayoutFreeInput(2));  // the output
  EXPECT_FALSE(unmarked.IsLayoutFreeInput(1));
  Program program = *marked.InitialProgram();
  ASSERT_EQ(program.layout_free_inputs.size(), 1u);
  EXPECT_EQ(program.layout_free_inputs[0]->name, "B");
  EXPECT_TRUE(program.IsLayoutFreeInput(program.inputs[1].get()));
  EXPECT_TRUE(unmarked.InitialProgram()->layout_free_inputs.empty());
}

TEST(CustomWorkload, FunctionsLowerToCallsAndSelects) {
  const std::string text = PrintProgram(
      *ParseCustomWorkload(
           "Y[i] = select(lt(X[i], 0), X[i] * 0.1, X[i]) + select(X[i], 1, 2) "
           "+ ge(X[i], 1) + erf(X[i]) + pow(X[i], 3)",
           "i=4")
           ->InitialProgram());
  EXPECT_THAT(text, HasSubstr("select(X[vi] < 0.0f, X[vi] * 0.1f, X[vi])"));
  EXPECT_THAT(text, HasSubstr("select(X[vi] != 0.0f, 1.0f, 2.0f)"));
  EXPECT_THAT(text, HasSubstr("select(X[vi] >= 1.0f, 1.0f, 0.0f)"));
  EXPECT_THAT(text, HasSubstr("erf(X[vi])"));
  EXPECT_THAT(text, HasSubstr("pow(X[vi], 3.0f)"));
}

TEST(CustomWorkloadErrors, DeclaredInputs) {
  EXPECT_EQ(ErrorOf("input X[4]; input X[4]; Y[i] = X[i]", "i=4"),
            "custom expression, column 13: input X is declared twice");
  EXPECT_EQ(ErrorOf("input X[4]; X[i] = A[i]; Y[i] = X[i]", "i=4"),
            "custom expression, column 13: tensor X is declared as an input; a "
            "statement cannot define it");
  EXPECT_EQ(ErrorOf("input X[4]; input A[4]; Y[i] = X[i]", "i=4"),
            "custom expression, column 13: input A is declared but no "
            "statement reads it");
  EXPECT_EQ(ErrorOf("input root[4]; Y[i] = root[i]", "i=4"),
            "custom expression, column 1: the tensor name root is reserved for "
            "the program's root block");
  EXPECT_EQ(ErrorOf("input i[4]; Y[i] = i[i]", "i=4"),
            "custom expression: i is used both as a tensor and as an index "
            "variable");
  EXPECT_EQ(ErrorOf("input X[4,4]; Y[i] = X[i]", "i=4"),
            "custom expression, column 22: input X is declared with 2 "
            "dimensions but read with 1 indices here");
  EXPECT_EQ(ErrorOf("input X[1,4,6,6]; Y[n,c,p] = X[n,c,p,p+1]", "n=1,c=4,p=6"),
            "custom expression, column 30: index p+1 of input X in dimension 3 "
            "(extent 6) reaches 6, past the declared extent; read X?[...] for "
            "the pad value outside it");
  EXPECT_EQ(ErrorOf("input X[1,4,6,6]; Y[n,c,p] = X[n,c,p-1,p]", "n=1,c=4,p=6"),
            "custom expression, column 30: index p-1 of input X in dimension 2 "
            "(extent 6) can be negative (down to -1); read X?[...] for the pad "
            "value outside it");
  EXPECT_EQ(ErrorOf("Y[i] = X?[i-1]", "i=4"),
            "custom expression, column 8: X?[...] pads an undeclared input; "
            "declare it first: input X[extents];");
  EXPECT_EQ(ErrorOf("input X[4]; T[i] = X[i]; Y[i] = T?[i-1]", "i=4"),
            "custom expression, column 33: T?[...] pads T, which a statement "
            "defines; only declared inputs take padded reads");
  EXPECT_THAT(ErrorOf("input X[4]; Y[i] = X?[2147483647*i]", "i=3"),
              HasSubstr("index 2147483647*i of input X in dimension 0 (extent "
                        "4) spans 0 to 4294967294, too far to pad"));
  EXPECT_THAT(
      ErrorOf("input X[2,1073741824]; Y[a,i] = X?[a,i+1]", "a=2,i=1073741824"),
      HasSubstr("input X with the padding its padded reads reach "
                "[2, 1073741825] is too large"));
}

TEST(CustomWorkloadErrors, BuiltTreesAreCheckedToo) {
  // Definitions built in code, not parsed, meet the same bounds.
  ParsedDefinition empty;
  EXPECT_EQ(CheckCustomDefinition(empty, {}).status().message(),
            "custom expression: no statement defines an output");
  ParsedDefinition nan_pad = *ParseCustomExpr("input X[4]; Y[i] = X?[i-1]");
  nan_pad.inputs[0].pad_value = std::nan("");
  EXPECT_EQ(CheckCustomDefinition(nan_pad, {{"i", 4}}).status().message(),
            "custom expression, column 1: the pad value of input X is not a "
            "finite float32");
  ParsedDefinition wide = *ParseCustomExpr("input X[4]; Y[i] = X[i]");
  wide.inputs[0].shape.assign(kMaxDeclaredRank + 1, 1);
  EXPECT_EQ(CheckCustomDefinition(wide, {{"i", 4}}).status().message(),
            "custom expression, column 1: input X must have 1 to 8 "
            "dimensions");
  ParsedDefinition many = *ParseCustomExpr("input X[4]; Y[i] = X[i]");
  many.inputs.resize(kMaxInputDeclarations + 1, many.inputs[0]);
  EXPECT_EQ(CheckCustomDefinition(many, {{"i", 4}}).status().message(),
            "custom expression: more than 256 input declarations");
}

TEST(CustomWorkload, ParseErrorsPassThrough) {
  EXPECT_THAT(ErrorOf("C[i] = ", "i=4"), HasSubstr("column 8"));
}

TEST(CustomWorkloadErrors, Dims) {
  EXPECT_EQ(ErrorOf("C[i,j] += A[i,k] * B[k,j]", "i=4,j=4"),
            "custom expression, column 11: index k has no extent in the dims "
            "(given: i, j); add k=EXTENT");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", ""),
            "custom expression, column 1: index i has no extent in the dims "
            "(given: none); add i=EXTENT");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=4,z=2"),
            "dims: z is not an index of the expression; its indices: i");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=0"),
            "dims: i must be a positive integer, got \"0\"");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=-3"),
            "dims: i must be a positive integer, got \"-3\"");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=2.5"),
            "dims: i must be a positive integer, got \"2.5\"");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=4,i=5"), "dims: i is given twice");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i4"), "dims: \"i4\" is not name=extent");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=4,"),
            "dims: empty entry (a stray ','); expected name=extent,...");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "1i=4"),
            "dims: \"1i\" is not an index name");
  EXPECT_EQ(ErrorOf("C[i] = A[i]", "i=3000000000"),
            "dims: i=3000000000 is too large (at most 2147483648)");
}

TEST(CustomWorkloadErrors, Reductions) {
  EXPECT_EQ(
      ErrorOf("C[i,j] = A[i,k] * B[k,j]", "i=2,j=2,k=2"),
      "custom expression, column 1: index k appears on the right side of "
      "C = ... but not on the left; use +=, max= or min= to reduce over it");
  EXPECT_EQ(ErrorOf("C[i] += A[i]", "i=2"),
            "custom expression, column 1: += reduces over the indices found "
            "only on the right side, but every index of C's right side is on "
            "its left; use =");
  // Left-side indices need not be read (broadcast).
  EXPECT_TRUE(ParseCustomWorkload("C[i,j] = A[i]", "i=2,j=3").ok());
}

TEST(CustomWorkloadErrors, Definitions) {
  EXPECT_EQ(ErrorOf("C[i] = A[i]; C[i] = A[i] * 2", "i=2"),
            "custom expression, column 14: tensor C is defined twice");
  EXPECT_EQ(ErrorOf("D[i] = C[i]; C[i] = A[i]; E[i] = D[i] + C[i]", "i=2"),
            "custom expression, column 14: tensor C is read before the "
            "statement that defines it");
  EXPECT_EQ(ErrorOf("C[i] = C[i] + A[i]", "i=2"),
            "custom expression, column 8: C is read on the right side of its "
            "own definition");
  EXPECT_EQ(ErrorOf("T[i] = A[i]; C[i] = A[i] * 2", "i=2"),
            "custom expression, column 1: T is defined but never read; only "
            "the last statement defines an output");
  EXPECT_EQ(ErrorOf("C[i,i] = A[i]", "i=2"),
            "custom expression, column 1: index i appears twice on the left "
            "side of C");
  EXPECT_EQ(ErrorOf("C[i] = A[i] + A[i,i]", "i=2"),
            "custom expression, column 15: A is read with 2 indices here but "
            "has 1 dimensions");
  EXPECT_EQ(ErrorOf("C[i] = A[i] * i[i]", "i=2"),
            "custom expression: i is used both as a tensor and as an index "
            "variable");
  EXPECT_EQ(ErrorOf("root[i] = A[i]", "i=2"),
            "custom expression, column 1: the tensor name root is reserved for "
            "the program's root block");
}

TEST(CustomWorkloadErrors, IndexRanges) {
  EXPECT_EQ(ErrorOf("C[i] = A[i-1]", "i=4"),
            "custom expression, column 8: index i-1 of A can be negative "
            "(down to -1)");
  EXPECT_EQ(ErrorOf("T[i] = A[i]; C[i] = T[i+1]", "i=4"),
            "custom expression, column 21: index i+1 of T reaches 4, past its "
            "extent 4");
  EXPECT_TRUE(
      ParseCustomWorkload("T[i] = A[i]; C[j] = T[2*j+1]", "i=8,j=3").ok());
}

TEST(CustomWorkloadErrors, AbsurdSizes) {
  EXPECT_EQ(
      ErrorOf("C[i,j] = A[i,j]", "i=2147483648,j=2"),
      "custom expression: tensor A [2147483648, 2] is too large (more than "
      "2147483648 elements)");
  EXPECT_THAT(ErrorOf("C[i] = A[2147483647*i]", "i=2147483648"),
              HasSubstr("index 2147483647*i of A reaches"));
}

}  // namespace
}  // namespace lathe

#include "compiler/workload/flatten_dims.h"

#include <gtest/gtest.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/workload/reference.h"
#include "tests/compiler/workload/definition_text.h"

namespace lathe {
namespace {

using testing::Checked;
using testing::DimsText;

// The flattened form as "text|dims".
std::string Flat(const std::string& expr, const std::string& dims) {
  absl::StatusOr<CustomDefinition> flat = FlattenDims(Checked(expr, dims));
  EXPECT_TRUE(flat.ok()) << flat.status();
  if (!flat.ok()) return "";
  return absl::StrCat(PrintParsedDefinition(flat->parsed), "|",
                      DimsText(flat->dims));
}

// The flattened workload computes what the original does on the same
// memory: random inputs, both references, outputs equal element by element.
void ExpectSameResults(const std::string& expr, const std::string& dims) {
  const CustomDefinition original = Checked(expr, dims);
  absl::StatusOr<CustomDefinition> flat = FlattenDims(original);
  ASSERT_TRUE(flat.ok()) << flat.status();
  absl::StatusOr<Workload> before = MakeCustomWorkload(original);
  absl::StatusOr<Workload> after = MakeCustomWorkload(*flat);
  ASSERT_TRUE(before.ok() && after.ok());
  ASSERT_EQ(before->inputs().size(), after->inputs().size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<TensorData> inputs, flat_inputs;
  for (size_t i = 0; i < before->inputs().size(); ++i) {
    TensorData data(DType::Float32(), before->inputs()[i].shape());
    for (double& v : data.values) v = value(rng);
    TensorData same = data;
    same.shape = after->inputs()[i].shape();
    ASSERT_EQ(data.size(), same.size()) << "input " << i;
    inputs.push_back(std::move(data));
    flat_inputs.push_back(std::move(same));
  }
  absl::StatusOr<std::vector<TensorData>> want = RunReference(*before, inputs);
  absl::StatusOr<std::vector<TensorData>> got =
      RunReference(*after, flat_inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*want)[0].values.size(), (*got)[0].values.size());
  for (size_t k = 0; k < (*want)[0].values.size(); ++k) {
    ASSERT_EQ((*want)[0].values[k], (*got)[0].values[k]) << "element " << k;
  }
}

// The group of a 1x1 stride-1 convolution with bias and a residual add, as
// the partition emits it: the kernel indices go, the spatial ones merge,
// the channel stays apart because the bias broadcasts over it.
constexpr char kPointwiseConv[] =
    "input in0[1,8,6,5]; input in1[4,8,1,1] const; input in2[4] const; "
    "input in3[1,4,6,5]; "
    "t1[v0,v1,v2,v3] += in0[v0,v4,v2+v5,v3+v6] * in1[v1,v4,v5,v6]; "
    "t0[v7,v8,v9,v10] = t1[v7,v8,v9,v10] + in2[v8]; "
    "out[v11,v12,v13,v14] = in3[v11,v12,v13,v14] + t0[v11,v12,v13,v14]";
constexpr char kPointwiseConvDims[] =
    "v0=1,v1=4,v2=6,v3=5,v4=8,v5=1,v6=1,v7=1,v8=4,v9=6,v10=5,v11=1,v12=4,"
    "v13=6,v14=5";

TEST(FlattenDims, PointwiseConvolutionMergesItsSpatialDimensions) {
  EXPECT_EQ(
      Flat(kPointwiseConv, kPointwiseConvDims),
      "input in0[1,8,30]; input in1[4,8,1,1] const; input in2[4] const; "
      "input in3[1,4,30]; t1[v0,v1,v2] += in0[v0,v4,v2] * in1[v1,v4,0,0]; "
      "t0[v7,v8,v9] = t1[v7,v8,v9] + in2[v8]; "
      "out[v11,v12,v13] = in3[v11,v12,v13] + t0[v11,v12,v13]"
      "|v0=1,v1=4,v11=1,v12=4,v13=30,v2=30,v4=8,v7=1,v8=4,v9=30");
  ExpectSameResults(kPointwiseConv, kPointwiseConvDims);
}

TEST(FlattenDims, ElementwiseChainBecomesOneLoop) {
  const std::string expr =
      "input in0[1,3,4,5]; input in1[1,3,4,5]; "
      "t0[a,b,c,d] = in0[a,b,c,d] * in1[a,b,c,d]; "
      "out[e,f,g,h] = max(t0[e,f,g,h], 0)";
  const std::string dims = "a=1,b=3,c=4,d=5,e=1,f=3,g=4,h=5";
  EXPECT_EQ(Flat(expr, dims),
            "input in0[60]; input in1[60]; t0[a] = in0[a] * in1[a]; "
            "out[e] = max(t0[e], 0.0)|a=60,e=60");
  ExpectSameResults(expr, dims);
}

TEST(FlattenDims, BatchedMatmulMergesBatchIntoRows) {
  const std::string expr = "C[b,i,j] += A[b,i,k] * B[k,j]";
  const std::string dims = "b=2,i=3,j=4,k=5";
  EXPECT_EQ(Flat(expr, dims), "C[b,j] += A[b,k] * B[k,j]|b=6,j=4,k=5");
  ExpectSameResults(expr, dims);
}

// Padding, strides, windows and permutations keep their dimensions.
TEST(FlattenDims, WindowsStridesAndTransposesStayApart) {
  const std::string conv3x3 =
      "input in0[1,2,5,5]; input in1[3,2,3,3] const; "
      "out[n,k,h,w] += in0?[n,c,h+r-1,w+s-1] * in1[k,c,r,s]";
  const std::string conv3x3_dims = "c=2,h=5,k=3,n=1,r=3,s=3,w=5";
  EXPECT_EQ(
      Flat(conv3x3, conv3x3_dims),
      absl::StrCat(PrintParsedDefinition(Checked(conv3x3, conv3x3_dims).parsed),
                   "|", conv3x3_dims));

  // A stride-2 1x1 convolution loses its kernel indices only.
  const std::string strided =
      "input in0[1,2,8,8]; input in1[3,2,1,1] const; "
      "out[n,k,h,w] += in0[n,c,2*h+r,2*w+s] * in1[k,c,r,s]";
  const std::string strided_dims = "c=2,h=4,k=3,n=1,r=1,s=1,w=4";
  EXPECT_EQ(Flat(strided, strided_dims),
            "input in0[1,2,8,8]; input in1[3,2,1,1] const; "
            "out[n,k,h,w] += in0[n,c,2*h,2*w] * in1[k,c,0,0]"
            "|c=2,h=4,k=3,n=1,w=4");
  ExpectSameResults(strided, strided_dims);

  const std::string transpose = "input in0[2,3,4]; out[a,b,c] = in0[a,c,b]";
  EXPECT_EQ(Flat(transpose, "a=2,b=4,c=3"),
            "input in0[2,3,4]; out[a,b,c] = in0[a,c,b]|a=2,b=4,c=3");

  // A read of part of a dimension does not merge it.
  const std::string slice = "input in0[4,6]; out[i,j] = in0[i,j]";
  EXPECT_EQ(Flat(slice, "i=4,j=5"),
            "input in0[4,6]; out[i,j] = in0[i,j]|i=4,j=5");
}

TEST(FlattenDims, AReductionKeepsOneVariable) {
  const std::string expr = "input in0[3,1,1]; out[i] += in0[i,r,s]";
  EXPECT_EQ(Flat(expr, "i=3,r=1,s=1"),
            "input in0[3,1,1]; out[i] += in0[i,r,0]|i=3,r=1");
  ExpectSameResults(expr, "i=3,r=1,s=1");
}

// A unit reduction variable another statement also uses stays.
TEST(FlattenDims, SharedVariablesAreLeftAlone) {
  const std::string expr =
      "input in0[3,1]; t[i] += in0[i,r]; out[i,r] = t[i] + in0[i,r]";
  const std::string dims = "i=3,r=1";
  const std::string flat = Flat(expr, dims);
  EXPECT_NE(flat.find("t[i] += in0[i,r]"), std::string::npos) << flat;
  ExpectSameResults(expr, dims);
}

TEST(FlattenDims, FlattenedFormIsAFixedPoint) {
  for (const auto& [expr, dims] :
       std::vector<std::pair<std::string, std::string>>{
           {kPointwiseConv, kPointwiseConvDims},
           {"C[b,i,j] += A[b,i,k] * B[k,j]", "b=2,i=3,j=4,k=5"}}) {
    const std::string once = Flat(expr, dims);
    const size_t bar = once.find('|');
    EXPECT_EQ(Flat(once.substr(0, bar), once.substr(bar + 1)), once);
  }
}

}  // namespace
}  // namespace lathe

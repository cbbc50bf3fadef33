#include "compiler/graph/printer.h"

#include "compiler/graph/passes/infer_types.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

TEST(Printer, PrintsInputsConstantsNodesAndOutputs) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 2, 4, 4}));
  TensorData w(DType::Float32(), {3, 2, 3, 3});
  int wid = b.Const("w", w);
  int bias = b.Const("bias", testing::Floats({3}, {0.5, -1, 2}));
  int y = b.Add1("Conv", {x, wid, bias},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                  {"group", int64_t{1}},
                  {"auto_pad", std::string("NOTSET")}});
  int z = b.Add1("Clip", {y, kNoValue, b.Const("hi", testing::Scalar(6))});
  b.Output(z);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  EXPECT_EQ(PrintGraph(b.graph),
            "graph {\n"
            "  input %x: f32[1,2,4,4]\n"
            "  const %w: f32[3,2,3,3] (54 values)\n"
            "  const %bias: f32[3] = [0.5, -1, 2]\n"
            "  const %hi: f32[] = [6]\n"
            "  %Conv_0_out0: f32[1,3,4,4] = Conv(%x, %w, %bias) "
            "{auto_pad=\"NOTSET\", group=1, pads=[1,1,1,1]}  # Conv_0\n"
            "  %Clip_1_out0: f32[1,3,4,4] = Clip(%Conv_0_out0, _, %hi)  "
            "# Clip_1\n"
            "  output %Clip_1_out0\n"
            "}\n");
}

TEST(Printer, ShowsUntypedValues) {
  GraphBuilder b;
  int x = b.Input("x", F32({2}));
  b.Output(b.Add1("Relu", {x}));
  EXPECT_NE(PrintGraph(b.graph).find("%Relu_0_out0: ? = Relu(%x)"),
            std::string::npos)
      << PrintGraph(b.graph);
}

}  // namespace
}  // namespace lathe::graph

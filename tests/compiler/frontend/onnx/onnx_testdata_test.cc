// Imports the node cases of Debian's libonnx-testdata: every case either
// imports, with its test_data_set_0 tensors matching the graph's inputs and
// outputs, or is refused with one clean error (Unimplemented for what Lathe
// does not support). Skipped with a message when the package is missing.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/onnx/onnx_importer.h"
#include "compiler/frontend/onnx/tensor_file.h"
#include "compiler/graph/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

const char kNodeCases[] = "/usr/share/libonnx-testdata/data/node";

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  DIR* dir = ::opendir(kNodeCases);
  if (dir == nullptr) return names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name.rfind("test_", 0) == 0) names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// Checks that the case's tensors match the imported graph's inputs and
// outputs in count, dtype and shape.
void CheckTensorsMatch(const std::string& name, const graph::Graph& g) {
  const std::string data =
      absl::StrCat(kNodeCases, "/", name, "/test_data_set_0/");
  for (const char* kind : {"input", "output"}) {
    const std::vector<int>& ids =
        std::string(kind) == "input" ? g.inputs() : g.outputs();
    size_t count = 0;
    while (IsFile(absl::StrCat(data, kind, "_", count, ".pb"))) ++count;
    EXPECT_EQ(count, ids.size()) << name << " " << kind << "s";
    for (size_t i = 0; i < std::min(count, ids.size()); ++i) {
      std::string path = absl::StrCat(data, kind, "_", i, ".pb");
      auto tensor = ReadTensorFile(path);
      ASSERT_TRUE(tensor.ok()) << tensor.status();
      const graph::Value& value = g.value(ids[i]);
      EXPECT_EQ(tensor->dtype, value.type.dtype) << path;
      if (value.typed) {
        EXPECT_EQ(tensor->shape, value.type.shape) << path;
      }
    }
  }
}

OnnxImportOptions ConstantIntegerInputs(const std::string& name,
                                        const graph::Graph& g) {
  OnnxImportOptions options;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const graph::Value& input = g.value(g.inputs()[i]);
    if (input.type.dtype.is_float()) continue;
    auto data = ReadTensorFile(absl::StrCat(
        kNodeCases, "/", name, "/test_data_set_0/input_", i, ".pb"));
    if (data.ok()) options.constant_inputs[input.name] = *data;
  }
  return options;
}

TEST(OnnxTestdata, EveryNodeCaseImportsOrIsRefusedCleanly) {
  if (!IsDirectory(kNodeCases)) {
    GTEST_SKIP() << kNodeCases << " is missing (install libonnx-testdata)";
  }
  std::vector<std::string> names = CaseNames();
  ASSERT_GT(names.size(), 100u);
  // LATHE_TESTDATA_VERBOSE=1 prints every refusal.
  const bool verbose = std::getenv("LATHE_TESTDATA_VERBOSE") != nullptr;
  int imported_count = 0;
  int passes_count = 0;
  std::map<std::string, std::string> pass_errors;
  std::map<absl::StatusCode, int> refused;
  std::map<std::string, std::string> other_errors;
  for (const std::string& name : names) {
    const std::string path = absl::StrCat(kNodeCases, "/", name, "/model.onnx");
    auto imported = ImportOnnxModel(path);
    if (imported.ok()) {
      ++imported_count;
      EXPECT_TRUE(imported->Verify().ok()) << name;
      CheckTensorsMatch(name, *imported);
      // The graph's passes accept the importer's opset-17 form, with the
      // integer and bool inputs (shapes, axes, pads) bound as constants.
      OnnxImportOptions options = ConstantIntegerInputs(name, *imported);
      auto bound = ImportOnnxModel(path, options);
      ASSERT_TRUE(bound.ok()) << name << ": " << bound.status();
      absl::Status passes = graph::RunGraphPasses(*bound);
      if (passes.ok()) {
        ++passes_count;
      } else {
        pass_errors[name] = passes.ToString();
      }
      continue;
    }
    ++refused[imported.status().code()];
    if (verbose)
      std::printf("  refused %s\n", imported.status().ToString().c_str());
    // One line, naming the model file.
    EXPECT_THAT(std::string(imported.status().message()),
                ::testing::Not(::testing::HasSubstr("\n")))
        << name;
    if (imported.status().code() != absl::StatusCode::kUnimplemented) {
      other_errors[name] = std::string(imported.status().message());
    }
  }
  std::printf(
      "libonnx-testdata node cases: %zu, imported %d, refused as "
      "unsupported %d, refused otherwise %zu\n",
      names.size(), imported_count, refused[absl::StatusCode::kUnimplemented],
      other_errors.size());
  for (const auto& [name, message] : other_errors) {
    std::printf("  %s: %s\n", name.c_str(), message.c_str());
  }
  std::printf(
      "of the imported: %d through the graph passes, refused there "
      "%zu\n",
      passes_count, pass_errors.size());
  for (const auto& [name, message] : pass_errors) {
    std::printf("  %s: %s\n", name.c_str(), message.c_str());
  }
  EXPECT_GT(imported_count, 400);
  // The importer's form reaches the graph's passes for nearly all of them
  // (those refused there use training mode, argmax outputs or uint8 pools).
  EXPECT_GT(passes_count, 400);
}

// Cases of the supported operators that must import, one or more per op
// family, across the opsets the suite uses.
TEST(OnnxTestdata, SupportedOperatorCasesImport) {
  if (!IsDirectory(kNodeCases)) {
    GTEST_SKIP() << kNodeCases << " is missing (install libonnx-testdata)";
  }
  const char* kCases[] = {
      "test_conv_with_strides_padding",
      "test_conv_with_autopad_same",
      "test_convtranspose",
      "test_gemm_default_no_bias",
      "test_matmul_4d",
      "test_add_bcast",
      "test_relu",
      "test_leakyrelu_default",
      "test_clip_default_inbounds",
      "test_hardswish",
      "test_max_example",
      "test_where_example",
      "test_cast_FLOAT_to_DOUBLE",
      "test_maxpool_2d_same_upper",
      "test_averagepool_2d_same_lower",
      "test_globalaveragepool",
      "test_batchnorm_example",
      "test_softmax_axis_0",
      "test_logsoftmax_axis_1",
      "test_layer_normalization_4d_axis1",
      "test_reduce_mean_default_axes_keepdims_example",
      "test_reduce_sum_keepdims_example",
      "test_transpose_default",
      "test_reshape_reduced_dims",
      "test_flatten_axis0",
      "test_squeeze",
      "test_unsqueeze_axis_0",
      "test_concat_2d_axis_0",
      "test_split_equal_parts_1d",
      "test_slice",
      "test_gather_0",
      "test_constant_pad",
      "test_expand_dim_changed",
      "test_identity",
      "test_dropout_default",
      "test_constant",
      "test_constantofshape_float_ones",
      "test_shape",
  };
  for (const char* name : kCases) {
    const std::string dir = absl::StrCat(kNodeCases, "/", name);
    if (!IsDirectory(dir)) {
      ADD_FAILURE() << name << " is not in this libonnx-testdata";
      continue;
    }
    auto imported = ImportOnnxModel(dir + "/model.onnx");
    ASSERT_TRUE(imported.ok()) << name << ": " << imported.status();
    CheckTensorsMatch(name, *imported);
  }
}

}  // namespace
}  // namespace lathe

// gpu_model_emulated MODEL_DIR...: each folder's model.onnx run on an
// emulated GPU through api::GpuModel (what `lathe run MODEL --target cuda`
// runs on a device: the passes, the partition, every kernel's default GPU
// schedule as CUDA C compiled by NVRTC, device memory, host steps), on its
// input_N.pb files, each output compared with expected_N.pb (rtol 1e-3,
// atol 1e-4, as compare_tensors); or, in the layout of ONNX's test cases,
// test_data_set_0/input_N.pb and output_N.pb. Integer, bool and scalar
// inputs are bound at load, as `lathe run` binds them. One PASS or FAIL
// line per model; exits 0 when every model passed, 1 otherwise, 77 (a
// skip) without NVRTC.
// Tests: tests/models/gpu_tiny_models_test.sh.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/gpu_model.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/frontend/onnx/onnx_importer.h"
#include "compiler/frontend/onnx/tensor_file.h"
#include "compiler/interp/allclose.h"
#include "tests/api/emulated_model_device.h"

namespace lathe {
namespace {

// The files folder/PREFIX0.pb, PREFIX1.pb, ... that exist, in order.
std::vector<std::string> Numbered(const std::string& folder,
                                  const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    std::string path = absl::StrCat(folder, "/", prefix, i, ".pb");
    if (!std::filesystem::exists(path)) return files;
    files.push_back(path);
  }
}

absl::Status RunModel(const std::string& folder) {
  absl::StatusOr<graph::Graph> graph = ImportOnnxModel(folder + "/model.onnx");
  if (!graph.ok()) return graph.status();
  const std::string data_set = folder + "/test_data_set_0";
  const bool onnx_layout = std::filesystem::is_directory(data_set);
  std::vector<std::string> input_files =
      Numbered(onnx_layout ? data_set : folder, "input_");
  if (input_files.size() != graph->inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(input_files.size(), " input files for ",
                     graph->inputs().size(), " inputs"));
  }
  api::GpuModelOptions options;
  options.device = std::make_shared<api::testing::EmulatedModelDevice>();
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < input_files.size(); ++i) {
    absl::StatusOr<TensorData> data = ReadTensorFile(input_files[i]);
    if (!data.ok()) return data.status();
    if (data->dtype == DType::Float32() && !data->shape.empty()) {
      inputs.push_back(*std::move(data));
    } else {
      options.input_values[graph->value(graph->inputs()[i]).name] =
          *std::move(data);
    }
  }
  absl::StatusOr<std::unique_ptr<api::GpuModel>> model =
      api::GpuModel::FromGraph(*std::move(graph), options);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run(inputs);
  if (!outputs.ok()) return outputs.status();
  std::vector<std::string> expected_files = onnx_layout
                                                ? Numbered(data_set, "output_")
                                                : Numbered(folder, "expected_");
  if (expected_files.size() != outputs->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(outputs->size(), " outputs, ", expected_files.size(),
                     " expected files"));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    absl::StatusOr<TensorData> expected = ReadTensorFile(expected_files[i]);
    if (!expected.ok()) return expected.status();
    absl::Status close = CheckAllClose((*outputs)[i], *expected, 1e-3, 1e-4,
                                       absl::StrCat("output ", i));
    if (!close.ok()) return close;
  }
  std::printf("PASS %s: %d kernel calls (%d distinct), %d host steps\n",
              folder.c_str(), (*model)->stats().kernel_steps,
              (*model)->stats().distinct_kernels, (*model)->stats().host_steps);
  return absl::OkStatus();
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) {
  if (absl::Status nvrtc = lathe::cuda::CheckNvrtc(); !nvrtc.ok()) {
    std::printf("SKIP: %s\n", std::string(nvrtc.message()).c_str());
    return 77;
  }
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    absl::Status status = lathe::RunModel(argv[i]);
    if (!status.ok()) {
      std::printf("FAIL %s: %s\n", argv[i],
                  std::string(status.message()).c_str());
      ++failed;
    }
    std::fflush(stdout);
  }
  return failed == 0 && argc > 1 ? 0 : 1;
}

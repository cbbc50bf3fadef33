#include "cli/run_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/gpu_model.h"
#include "api/model.h"
#include "cli/command.h"
#include "cli/cuda_compile.h"
#include "cli/json_text.h"
#include "cli/model_args.h"
#include "cli/output_paths.h"
#include "cli/staged_outputs.h"
#include "compiler/frontend/onnx/tensor_file.h"

namespace lathe::cli {
namespace {

struct RunOptions {
  ModelArgs model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string db_path;
  std::string target = "host";
  bool compatible = false;
  bool json = false;
};

std::string ShapeJson(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string TensorJson(const api::ModelTensor& tensor,
                       const std::string& file) {
  std::string text =
      absl::StrCat("{\"name\": ", JsonString(tensor.name),
                   ", \"dtype\": ", JsonString(tensor.type.dtype.ToString()),
                   ", \"shape\": ", ShapeJson(tensor.type.shape));
  if (!file.empty()) absl::StrAppend(&text, ", \"file\": ", JsonString(file));
  return text + "}";
}

// The input files as tensors, checked against the model's inputs so that a
// refusal names the file as well as the input.
absl::StatusOr<std::vector<TensorData>> ReadInputs(
    const RunOptions& options, const std::vector<api::ModelTensor>& expected) {
  if (options.inputs.size() > expected.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model takes ", expected.size(), " input(s), got ",
                     options.inputs.size(), " --input files"));
  }
  if (options.inputs.size() < expected.size()) {
    const api::ModelTensor& missing = expected[options.inputs.size()];
    return absl::InvalidArgumentError(absl::StrCat(
        "missing input ", options.inputs.size(), " \"", missing.name, "\" (",
        graph::TensorTypeText(missing.type), "): the model takes ",
        expected.size(), " input(s), one --input file each, in order"));
  }
  std::vector<TensorData> tensors;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& path = options.inputs[i];
    absl::StatusOr<TensorData> data = lathe::ReadTensorFile(path);
    if (!data.ok()) {
      return absl::Status(
          data.status().code(),
          absl::StrCat("--input ", path, ": ", data.status().message()));
    }
    const graph::TensorType& type = expected[i].type;
    if (data->dtype != type.dtype || data->shape != type.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", path, ": input ", i, " \"", expected[i].name,
          "\" must be ", graph::TensorTypeText(type), ", the file holds ",
          data->dtype.ToString(), "[", absl::StrJoin(data->shape, ","), "]"));
    }
    tensors.push_back(*std::move(data));
  }
  return tensors;
}

// A model loaded for the CPU (api::Model) or a GPU (api::GpuModel), as the
// run needs it.
struct LoadedModel {
  std::vector<api::ModelTensor> outputs;
  api::ModelStats stats;
  std::function<absl::StatusOr<std::vector<TensorData>>(
      const std::vector<TensorData>&)>
      run;
  std::shared_ptr<void> model;  // keeps it alive
};

// Loads the graph as a ModelT (api::Model or api::GpuModel) with the run's
// database, target and input values (OptionsT: its options).
template <typename ModelT, typename OptionsT>
absl::StatusOr<std::unique_ptr<LoadedModel>> LoadModelFor(
    const RunOptions& options, graph::Graph graph,
    std::map<std::string, TensorData> input_values) {
  OptionsT model_options;
  model_options.db_path = options.db_path;
  model_options.target = options.target;
  model_options.compatible = options.compatible;
  model_options.input_values = std::move(input_values);
  absl::StatusOr<std::unique_ptr<ModelT>> made =
      ModelT::FromGraph(std::move(graph), model_options);
  if (!made.ok()) return made.status();
  std::shared_ptr<ModelT> model = *std::move(made);
  auto loaded = std::make_unique<LoadedModel>();
  loaded->outputs = model->outputs();
  loaded->stats = model->stats();
  loaded->run = [model](const std::vector<TensorData>& inputs) {
    return model->Run(inputs);
  };
  loaded->model = model;
  return loaded;
}

absl::Status RunRun(const RunOptions& options) {
  // 1. The command line, before any work.
  std::vector<NamedPath> input_paths = {{"model", options.model.path},
                                        {"--db", options.db_path}};
  for (const std::string& input : options.inputs) {
    input_paths.emplace_back("--input", input);
  }
  std::error_code error;
  if (!std::filesystem::is_directory(options.output_dir, error)) {
    if (!std::filesystem::create_directories(options.output_dir, error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--output-dir ", options.output_dir,
                       ": cannot create the folder: ", error.message()));
    }
  }

  // 2. The model as imported, and the input files checked against it.
  absl::StatusOr<graph::Graph> graph = options.model.Import();
  if (!graph.ok()) return graph.status();
  std::vector<api::ModelTensor> model_inputs;
  for (int v : graph->inputs()) {
    model_inputs.push_back({graph->value(v).name, graph->value(v).type});
  }
  absl::StatusOr<std::vector<TensorData>> inputs =
      ReadInputs(options, model_inputs);
  if (!inputs.ok()) return inputs.status();

  // 3. Passes, partition, kernels. The run happens once, so integer, bool
  //    and scalar inputs fold into the model as constants: shapes computed
  //    from them (a Reshape's target, a Slice's starts, a Range's limit)
  //    become known. A cuda target runs the model on this machine's GPU.
  std::map<std::string, TensorData> input_values;
  std::vector<TensorData> run_inputs;
  for (size_t i = 0; i < inputs->size(); ++i) {
    if ((*inputs)[i].dtype == DType::Float32() && !(*inputs)[i].shape.empty()) {
      run_inputs.push_back(std::move((*inputs)[i]));
    } else {
      input_values[model_inputs[i].name] = std::move((*inputs)[i]);
    }
  }
  auto load_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<LoadedModel>> model =
      NamesCudaTarget(options.target)
          ? LoadModelFor<api::GpuModel, api::GpuModelOptions>(
                options, *std::move(graph), std::move(input_values))
          : LoadModelFor<api::Model, api::ModelOptions>(
                options, *std::move(graph), std::move(input_values));
  if (!model.ok()) return model.status();
  double load_s = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - load_start)
                      .count();

  // 4. The run and the outputs (all or none).
  std::vector<std::string> output_files;
  std::vector<NamedPath> output_paths;
  for (size_t i = 0; i < (*model)->outputs.size(); ++i) {
    output_files.push_back((std::filesystem::path(options.output_dir) /
                            absl::StrCat("output_", i, ".pb"))
                               .string());
    output_paths.emplace_back("--output-dir", output_files.back());
  }
  if (absl::Status st = CheckOutputPaths(input_paths, output_paths); !st.ok()) {
    return st;
  }
  auto run_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->run(run_inputs);
  if (!outputs.ok()) return outputs.status();
  double run_s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - run_start)
                     .count();
  StagedOutputs staged;
  for (size_t i = 0; i < outputs->size(); ++i) {
    absl::Status written = lathe::WriteTensorFile(
        staged.Add(output_files[i]), (*outputs)[i], (*model)->outputs[i].name);
    if (!written.ok()) return staged.Named(written);
  }
  if (absl::Status st = staged.Commit(); !st.ok()) return st;

  // 5. What ran.
  const api::ModelStats& stats = (*model)->stats;
  std::fprintf(stderr,
               "%d kernels: %d tuned, %d default schedule; %d host steps\n",
               stats.distinct_kernels, stats.kernels_tuned,
               stats.kernels_default, stats.host_steps);
  if (options.json) {
    std::vector<std::string> inputs_json, outputs_json;
    for (size_t i = 0; i < model_inputs.size(); ++i) {
      inputs_json.push_back(TensorJson(model_inputs[i], options.inputs[i]));
    }
    for (size_t i = 0; i < (*model)->outputs.size(); ++i) {
      outputs_json.push_back(TensorJson((*model)->outputs[i], output_files[i]));
    }
    std::printf(
        "{\"model\": %s, \"target\": %s, \"database\": %s,\n"
        " \"inputs\": [%s],\n \"outputs\": [%s],\n"
        " \"kernels\": {\"distinct\": %d, \"tuned\": %d, \"default\": %d, "
        "\"steps\": %d},\n"
        " \"host_steps\": %d, \"alias_steps\": %d,\n"
        " \"peak_intermediate_bytes\": %lld, "
        "\"unshared_intermediate_bytes\": %lld, \"constant_bytes\": %lld,\n"
        " \"load_s\": %s, \"run_s\": %s}\n",
        JsonString(options.model.path).c_str(),
        JsonString(options.target).c_str(),
        options.db_path.empty() ? "null" : JsonString(options.db_path).c_str(),
        absl::StrJoin(inputs_json, ", ").c_str(),
        absl::StrJoin(outputs_json, ", ").c_str(), stats.distinct_kernels,
        stats.kernels_tuned, stats.kernels_default, stats.kernel_steps,
        stats.host_steps, stats.alias_steps,
        static_cast<long long>(stats.peak_intermediate_bytes),
        static_cast<long long>(stats.unshared_intermediate_bytes),
        static_cast<long long>(stats.constant_bytes),
        absl::StrFormat("%.6f", load_s).c_str(),
        absl::StrFormat("%.6f", run_s).c_str());
  }
  return absl::OkStatus();
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command =
      app.add_subcommand("run", "run an ONNX model on TensorProto input files");
  options->model.AddTo(command);
  command->add_option("--input", options->inputs,
                      "an input as an ONNX TensorProto file (input_0.pb); one "
                      "per model input, in the model's order");
  command
      ->add_option("--output-dir", options->output_dir,
                   "the folder for output_0.pb, output_1.pb, ... (made if "
                   "missing)")
      ->required();
  command->add_option("--db", options->db_path,
                      "the tuning database to take tuned kernels from");
  command->add_option("--target", options->target,
                      "the target to compile for (host, or e.g. 'llvm "
                      "-mcpu=znver4 -num-threads=2'; cuda: this machine's "
                      "GPU)");
  command->add_flag("--compatible", options->compatible,
                    "let records measured on a compatible target answer");
  command->add_flag("--json", options->json,
                    "print what ran (kernels, memory, times) as JSON");
  SetAction(command, [options] { return RunRun(*options); });
}

}  // namespace lathe::cli

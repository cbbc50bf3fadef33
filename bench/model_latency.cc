// A model's end-to-end latency on Lathe's kernels, the Lathe side of
// bench/models/run.sh (its peer: bench/models/ort_latency.js).
//
//   bench_model_latency MODEL.onnx [--threads N] [--runs R] [--db tuned.db]
//                       [--compatible]
//
// Loads the model for "host -num-threads=N" (kernels from the database when
// tuned for that target, or with --compatible for any thread count of this
// CPU, the default schedules otherwise), feeds every input deterministic
// random data, runs it 5 times to warm up and R timed times (RunFloat on
// float buffers when every input and output is float32, else Run), and
// prints one
// JSON line: {"model", "threads", "runs", "median_ms", "min_ms", "max_ms",
// "kernels_tuned", "kernels_default", "peak_intermediate_bytes"}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "api/model.h"
#include "compiler/interp/random_fill.h"

int main(int argc, char** argv) {
  std::string path;
  int threads = 1;
  int runs = 40;
  std::string db;
  bool compatible = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--threads" && has_value &&
        absl::SimpleAtoi(argv[i + 1], &threads) && threads >= 1) {
      ++i;
    } else if (arg == "--runs" && has_value &&
               absl::SimpleAtoi(argv[i + 1], &runs) && runs >= 1) {
      ++i;
    } else if (arg == "--db" && has_value) {
      db = argv[++i];
    } else if (arg == "--compatible") {
      compatible = true;
    } else if (path.empty() && !arg.empty() && arg[0] != '-') {
      path = arg;
    } else {
      std::fprintf(stderr,
                   "usage: bench_model_latency MODEL.onnx [--threads N] "
                   "[--runs R] [--db FILE] [--compatible]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "bench_model_latency: no model given\n");
    return 2;
  }
  lathe::api::ModelOptions options;
  options.db_path = db;
  options.compatible = compatible;
  options.target = absl::StrCat("host -num-threads=", threads);
  absl::StatusOr<std::unique_ptr<lathe::api::Model>> model =
      lathe::api::Model::Load(path, options);
  if (!model.ok()) {
    std::fprintf(stderr, "bench_model_latency: %s\n",
                 std::string(model.status().message()).c_str());
    return 1;
  }
  std::vector<lathe::TensorData> inputs;
  uint64_t seed = 1;
  for (const lathe::api::ModelTensor& input : (*model)->inputs()) {
    lathe::TensorData data(input.type.dtype, input.type.shape);
    lathe::FillRandom(&data, seed++);
    inputs.push_back(std::move(data));
  }
  // The float path's buffers, when every input and output is float32.
  bool float_path = true;
  std::vector<std::vector<float>> input_floats;
  std::vector<absl::Span<const float>> input_spans;
  for (const lathe::TensorData& data : inputs) {
    float_path &= data.dtype == lathe::DType::Float32();
    input_floats.emplace_back(data.values.begin(), data.values.end());
  }
  for (const std::vector<float>& floats : input_floats) {
    input_spans.push_back(absl::MakeConstSpan(floats));
  }
  std::vector<std::vector<float>> output_floats;
  std::vector<absl::Span<float>> output_spans;
  for (const lathe::api::ModelTensor& output : (*model)->outputs()) {
    float_path &= output.type.dtype == lathe::DType::Float32();
    output_floats.emplace_back(output.type.NumElements());
  }
  for (std::vector<float>& floats : output_floats) {
    output_spans.push_back(absl::MakeSpan(floats));
  }
  std::vector<double> times;
  for (int i = 0; i < 5 + runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status =
        float_path ? (*model)->RunFloat(input_spans, output_spans)
                   : (*model)->Run(inputs).status();
    const auto end = std::chrono::steady_clock::now();
    if (!status.ok()) {
      std::fprintf(stderr, "bench_model_latency: %s\n",
                   std::string(status.message()).c_str());
      return 1;
    }
    if (i >= 5) {
      times.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median =
      n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  const lathe::api::ModelStats& stats = (*model)->stats();
  std::printf(
      "{\"model\":\"%s\",\"threads\":%d,\"runs\":%d,\"median_ms\":%.4f,"
      "\"min_ms\":%.4f,\"max_ms\":%.4f,\"kernels_tuned\":%d,"
      "\"kernels_default\":%d,\"peak_intermediate_bytes\":%lld}\n",
      path.c_str(), threads, runs, median, times.front(), times.back(),
      stats.kernels_tuned, stats.kernels_default,
      static_cast<long long>(stats.peak_intermediate_bytes));
  return 0;
}

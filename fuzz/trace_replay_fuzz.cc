// libFuzzer target: traces (compiler/schedule/trace.h, trace_text.h) and
// their replay (replay.h). The input is read as trace JSON and as the text
// form; a trace that parses is replayed on a small matmul and on an
// elementwise chain. Every step returns a status: no crash, no hang, no
// growth beyond proto/trace_limits.h.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "compiler/schedule/trace_text.h"
#include "compiler/workload/spec.h"

namespace {

const lathe::Program& Initial(const char* spec) {
  static auto* programs = new std::map<std::string, lathe::Program>();
  auto it = programs->find(spec);
  if (it == programs->end()) {
    absl::StatusOr<lathe::Workload> w = lathe::ParseWorkloadSpec(spec);
    if (!w.ok()) __builtin_trap();
    absl::StatusOr<lathe::Program> p = w->InitialProgram();
    if (!p.ok()) __builtin_trap();
    it = programs->emplace(spec, *std::move(p)).first;
  }
  return it->second;
}

void Replay(const lathe::Trace& trace) {
  for (const char* spec : {"matmul:M=16,N=12,K=8", "relu:M=6,N=10"}) {
    (void)lathe::ReplayTrace(trace, Initial(spec));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (absl::StatusOr<lathe::Trace> trace = lathe::Trace::FromJson(text);
      trace.ok()) {
    Replay(*trace);
  }
  if (absl::StatusOr<lathe::Trace> trace = lathe::ParseTraceText(text);
      trace.ok()) {
    Replay(*trace);
  }
  return 0;
}

// The compiler hooks of `lathe serve` (compiler_hooks.h).
#include "tuner/service/compiler_hooks.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "report/report_file.h"

namespace lathe::service {

DaemonCompilerHooks CompilerHooks() {
  DaemonCompilerHooks hooks;
  hooks.parse_target = [](const std::string& text) {
    return ParseTarget(text);
  };
  hooks.report_path = [](const std::string& db_path, const std::string& job) {
    return report::JobReportPath(db_path, job);
  };
  hooks.write_report = [](const std::string& db_path, const std::string& job,
                          const std::vector<tuner::Task>& tasks,
                          bool weighted) -> absl::StatusOr<std::string> {
    report::ReportOptions options;
    options.job = job;
    if (weighted) {
      report::ModelInput model{absl::StrCat("job ", job, "'s weighted tasks"),
                               {}};
      for (const tuner::Task& task : tasks)
        model.tasks.push_back({task.workload.CanonicalForm(), task.weight});
      options.model = std::move(model);
    }
    const std::string path = report::JobReportPath(db_path, job);
    if (absl::Status st = report::WriteReport(db_path, options, path);
        !st.ok()) {
      return st;
    }
    return path;
  };
  return hooks;
}

}  // namespace lathe::service

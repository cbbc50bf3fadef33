// `lathe db export|import|merge|prune`: moving records (and the batch rows
// of tuning runs with them) between databases and keeping a database small.
// Every write is one transaction: all or nothing.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/db_command.h"
#include "cli/db_common.h"
#include "cli/json_text.h"
#include "cli/output_paths.h"
#include "cli/record_check.h"
#include "database/jsonl.h"
#include "database/merge.h"

namespace lathe::cli {
namespace {

struct TransferOptions {
  DbArgs db;
  std::string output;               // export
  std::vector<std::string> inputs;  // import, merge
  int k = 0;                        // prune
};

absl::Status RunExport(const TransferOptions& options) {
  if (absl::Status st = CheckOutputPaths({{"--db", options.db.path}},
                                         {{"-o", options.output}});
      !st.ok()) {
    return st;
  }
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      options.db.Open(db::OpenOptions::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  if (options.output.empty() || options.output == "-") {
    absl::StatusOr<db::ExportCounts> count = db::ExportJsonl(**db, std::cout);
    return count.status();
  }
  // Written beside and renamed into place, so a failed export never leaves
  // a partial file under the asked-for name.
  const std::string partial = options.output + ".partial";
  absl::StatusOr<db::ExportCounts> count;
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out)
      return absl::PermissionDeniedError(
          absl::StrCat(partial, ": cannot write"));
    count = db::ExportJsonl(**db, out);
  }
  if (!count.ok()) {
    std::remove(partial.c_str());
    return absl::Status(
        count.status().code(),
        absl::StrCat(options.output, ": ", count.status().message()));
  }
  if (std::rename(partial.c_str(), options.output.c_str()) != 0) {
    std::remove(partial.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat(options.output, ": cannot write"));
  }
  if (options.db.json) {
    std::printf("{\"exported\": %lld, \"batches\": %lld, \"file\": %s}\n",
                static_cast<long long>(count->records),
                static_cast<long long>(count->batches),
                JsonString(options.output).c_str());
  } else {
    std::printf("exported %lld records and %lld batches to %s\n",
                static_cast<long long>(count->records),
                static_cast<long long>(count->batches), options.output.c_str());
  }
  return absl::OkStatus();
}

void PrintCommitted(const std::string& verb, const std::string& source,
                    const db::CommitResult& result) {
  std::printf(
      "%s %s: %lld records added, %lld exact duplicates skipped; %lld "
      "batches added, %lld copies skipped\n",
      verb.c_str(), source.c_str(), static_cast<long long>(result.added),
      static_cast<long long>(result.duplicates),
      static_cast<long long>(result.batches_added),
      static_cast<long long>(result.batch_duplicates));
}

// The counts of a commit as JSON members: "added": n, "duplicates": n,
// "batches": n, "batch_duplicates": n.
std::string CountsJson(const db::CommitResult& result) {
  return absl::StrCat("\"added\": ", result.added,
                      ", \"duplicates\": ", result.duplicates,
                      ", \"batches\": ", result.batches_added,
                      ", \"batch_duplicates\": ", result.batch_duplicates);
}

// --json: one object for the whole command, whatever the number of inputs:
// {"db": ..., "sources": [...], counts}, each source a JSON value (an
// import's: {"source": ..., counts}; a merge, one commit for all: the
// file's name), counts as CountsJson writes them.
void PrintCommittedJson(const std::string& db_path,
                        const std::vector<std::string>& sources,
                        const db::CommitResult& total) {
  std::printf("{\"db\": %s, \"sources\": [%s], %s}\n",
              JsonString(db_path).c_str(), absl::StrJoin(sources, ", ").c_str(),
              CountsJson(total).c_str());
}

// Runs `fill` on the database at `path`, created if absent; a database this
// command created and then failed to fill is removed again, so that a
// refused import or merge leaves nothing behind.
absl::Status IntoDatabase(
    const DbArgs& args,
    const std::function<absl::Status(db::Database&)>& fill) {
  struct stat st;
  const bool existed = stat(args.path.c_str(), &st) == 0;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      args.Open(db::OpenOptions::Mode::kCreate);
  if (!db.ok()) return db.status();
  absl::Status filled = fill(**db);
  if (!filled.ok() && !existed) {
    db->reset();
    db::RemoveDatabaseFiles(args.path);
  }
  return filled;
}

absl::Status RunImport(const TransferOptions& options) {
  std::vector<std::string> sources;
  db::CommitResult total;
  absl::Status imported =
      IntoDatabase(options.db, [&](db::Database& db) -> absl::Status {
        for (const std::string& input : options.inputs) {
          absl::StatusOr<db::CommitResult> result;
          if (input == "-") {
            result =
                db::ImportJsonl(db, std::cin, "<stdin>", CheckImportedRecord);
          } else {
            std::ifstream in(input, std::ios::binary);
            if (!in)
              return absl::NotFoundError(absl::StrCat(input, ": cannot read"));
            result = db::ImportJsonl(db, in, input, CheckImportedRecord);
          }
          if (!result.ok()) return result.status();
          if (!options.db.json) PrintCommitted("imported", input, *result);
          sources.push_back(absl::StrCat("{\"source\": ", JsonString(input),
                                         ", ", CountsJson(*result), "}"));
          total.added += result->added;
          total.duplicates += result->duplicates;
          total.batches_added += result->batches_added;
          total.batch_duplicates += result->batch_duplicates;
        }
        return absl::OkStatus();
      });
  if (imported.ok() && options.db.json)
    PrintCommittedJson(options.db.path, sources, total);
  return imported;
}

absl::Status RunMerge(const TransferOptions& options) {
  return IntoDatabase(options.db, [&](db::Database& db) -> absl::Status {
    absl::StatusOr<db::CommitResult> result =
        db::MergeInto(db, options.inputs, CheckImportedRecord);
    if (!result.ok()) return result.status();
    if (options.db.json) {
      std::vector<std::string> sources;
      for (const std::string& input : options.inputs)
        sources.push_back(JsonString(input));
      PrintCommittedJson(options.db.path, sources, *result);
    } else {
      PrintCommitted("merged into", options.db.path, *result);
    }
    return absl::OkStatus();
  });
}

absl::Status RunPrune(const TransferOptions& options) {
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      options.db.Open(db::OpenOptions::Mode::kReadWrite);
  if (!db.ok()) return db.status();
  absl::StatusOr<int64_t> deleted = (*db)->Prune(options.k);
  if (!deleted.ok()) return deleted.status();
  if (options.db.json) {
    std::printf("{\"deleted\": %lld, \"kept_per_task\": %d}\n",
                static_cast<long long>(*deleted), options.k);
  } else {
    std::printf(
        "deleted %lld records; kept the %d fastest ok records of every task\n",
        static_cast<long long>(*deleted), options.k);
  }
  return absl::OkStatus();
}

}  // namespace

void AddDbTransferCommands(CLI::App* db) {
  auto export_options = std::make_shared<TransferOptions>();
  CLI::App* export_command =
      db->add_subcommand("export",
                         "write every record and tuning batch as JSON lines "
                         "(docs/database.md) to a file or stdout");
  export_options->db.AddTo(export_command);
  export_command->add_option("-o,--output", export_options->output,
                             "the file to write (default: stdout)");
  SetAction(export_command,
            [export_options] { return RunExport(*export_options); });

  auto import_options = std::make_shared<TransferOptions>();
  CLI::App* import_command =
      db->add_subcommand("import",
                         "add the records and batches of JSON-lines files "
                         "(each file all or nothing; - is stdin)");
  import_options->db.AddTo(import_command);
  import_command
      ->add_option("files", import_options->inputs, "JSON-lines files")
      ->required();
  SetAction(import_command,
            [import_options] { return RunImport(*import_options); });

  auto merge_options = std::make_shared<TransferOptions>();
  CLI::App* merge_command =
      db->add_subcommand("merge",
                         "add every record and tuning batch of other databases "
                         "(CI shards) to --db, dropping exact duplicates");
  merge_options->db.AddTo(merge_command);
  merge_command
      ->add_option("sources", merge_options->inputs, "databases to merge from")
      ->required();
  SetAction(merge_command,
            [merge_options] { return RunMerge(*merge_options); });

  auto prune_options = std::make_shared<TransferOptions>();
  CLI::App* prune_command = db->add_subcommand(
      "prune", "keep the k fastest ok records of every task, delete the rest");
  prune_options->db.AddTo(prune_command);
  prune_command->add_option("-k", prune_options->k, "records to keep per task")
      ->required();
  SetAction(prune_command,
            [prune_options] { return RunPrune(*prune_options); });
}

}  // namespace lathe::cli

#include "database/merge.h"

#include <sys/stat.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "database/sqlite_connection.h"

namespace lathe::db {
namespace {

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

absl::StatusOr<CommitResult> MergeInto(Database& dest,
                                       const std::vector<std::string>& sources,
                                       const RecordCheck& check) {
  std::vector<std::unique_ptr<Database>> opened;
  for (const std::string& source : sources) {
    if (SameFile(source, dest.path())) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": is the destination; cannot merge a database into itself"));
    }
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(
        source, OpenOptions{.mode = OpenOptions::Mode::kReadOnly});
    if (!db.ok()) return db.status();
    opened.push_back(*std::move(db));
  }

  absl::StatusOr<std::vector<proto::Job>> dest_jobs = dest.Jobs();
  if (!dest_jobs.ok()) return dest_jobs.status();
  std::set<std::string> known;
  for (const proto::Job& job : *dest_jobs) known.insert(job.id());

  return dest.CommitFrom(
      [&](const Database::RecordSink& sink,
          const Database::BatchSink& batch_sink) -> absl::Status {
        for (std::unique_ptr<Database>& source : opened) {
          absl::StatusOr<std::vector<proto::Job>> jobs = source->Jobs();
          if (!jobs.ok()) return jobs.status();
          for (const proto::Job& job : *jobs) {
            if (!known.insert(job.id()).second) continue;
            LATHE_RETURN_IF_ERROR(dest.PutJob(job));
          }
          LATHE_RETURN_IF_ERROR(source->ForEachRecord(
              [&](const proto::Record& record) -> absl::Status {
                if (check) {
                  if (absl::Status st = check(record); !st.ok()) {
                    return absl::Status(
                        st.code(),
                        absl::StrCat(source->path(), ": record ", record.id(),
                                     ": ", st.message()));
                  }
                }
                return sink(record);
              }));
          // After every record of the source: each batch's task is known.
          LATHE_RETURN_IF_ERROR(source->ForEachBatch(
              [&](const TuningBatch& batch) -> absl::Status {
                absl::Status stored = batch_sink(batch);
                if (stored.ok()) return stored;
                return absl::Status(
                    stored.code(),
                    absl::StrCat(source->path(), ": batch ", batch.index,
                                 " of job \"", batch.job,
                                 "\": ", stored.message()));
              }));
        }
        return absl::OkStatus();
      });
}

}  // namespace lathe::db

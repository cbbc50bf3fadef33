#include "database/jsonl.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/bounded_read.h"
#include "base/untrusted_text.h"
#include "google/protobuf/util/json_util.h"

namespace lathe::db {

std::string RecordsFileHeaderLine() {
  return absl::StrCat("{\"format\":\"", kRecordsFormatName,
                      "\",\"version\":", kRecordsFormatVersion, "}");
}

absl::StatusOr<std::string> RecordToJsonLine(const proto::Record& record) {
  proto::Record copy = record;
  copy.clear_id();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string line;
  auto status =
      google::protobuf::util::MessageToJsonString(copy, &line, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("record ", record.id(), ": ", status.ToString()));
  }
  return line;
}

absl::StatusOr<proto::Record> RecordFromJsonLine(const std::string& line,
                                                 const std::string& where) {
  proto::Record record;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status =
      google::protobuf::util::JsonStringToMessage(line, &record, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where,
        ": not a record: ", EscapedPrefix(std::string(status.message()))));
  }
  if (record.id() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": a record may not carry an id"));
  }
  return record;
}

bool IsBatchLine(const std::string& line) {
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&rest, "{")) return false;
  return absl::StartsWith(absl::StripLeadingAsciiWhitespace(rest), "\"batch\"");
}

absl::StatusOr<std::string> BatchToJsonLine(const TuningBatch& batch) {
  proto::RecordsFileBatchLine message;
  proto::TuningBatch& out = *message.mutable_batch();
  out.set_job(batch.job);
  out.set_workload_key(batch.workload_key);
  out.set_target(batch.target);
  out.set_finished_ms(batch.finished_ms);
  out.set_trials(batch.trials);
  if (batch.accuracy) out.set_accuracy(*batch.accuracy);
  out.set_trained_on(batch.trained_on);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string line;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &line, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("batch ", batch.index, " of job \"",
                                            batch.job,
                                            "\": ", status.ToString()));
  }
  return line;
}

absl::StatusOr<TuningBatch> BatchFromJsonLine(const std::string& line,
                                              const std::string& where) {
  proto::RecordsFileBatchLine message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status =
      google::protobuf::util::JsonStringToMessage(line, &message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where,
        ": not a batch: ", EscapedPrefix(std::string(status.message()))));
  }
  const proto::TuningBatch& in = message.batch();
  TuningBatch batch;
  batch.job = in.job();
  batch.workload_key = in.workload_key();
  batch.target = in.target();
  batch.finished_ms = in.finished_ms();
  batch.trials = in.trials();
  if (in.has_accuracy()) batch.accuracy = in.accuracy();
  batch.trained_on = in.trained_on();
  return batch;
}

absl::StatusOr<ExportCounts> ExportJsonl(Database& db, std::ostream& out) {
  out << RecordsFileHeaderLine() << '\n';
  ExportCounts counts;
  absl::Status written =
      db.ForEachRecord([&](const proto::Record& record) -> absl::Status {
        absl::StatusOr<std::string> line = RecordToJsonLine(record);
        if (!line.ok()) return line.status();
        out << *line << '\n';
        ++counts.records;
        return out ? absl::OkStatus()
                   : absl::DataLossError("writing the export failed");
      });
  if (!written.ok()) return written;
  // After every record, so that an import knows each batch's task.
  written = db.ForEachBatch([&](const TuningBatch& batch) -> absl::Status {
    absl::StatusOr<std::string> line = BatchToJsonLine(batch);
    if (!line.ok()) return line.status();
    out << *line << '\n';
    ++counts.batches;
    return out ? absl::OkStatus()
               : absl::DataLossError("writing the export failed");
  });
  if (!written.ok()) return written;
  out.flush();
  if (!out) return absl::DataLossError("writing the export failed");
  return counts;
}

absl::StatusOr<CommitResult> ImportJsonl(Database& db, std::istream& in,
                                         const std::string& source_name,
                                         const RecordCheck& check) {
  std::string line;
  int64_t line_number = 0;
  // One line, at most kMaxRecordLineBytes of it read: false at the end.
  auto next_line = [&]() -> absl::StatusOr<bool> {
    absl::StatusOr<bool> read =
        ReadBoundedLine(in, &line, kMaxRecordLineBytes, "kMaxRecordLineBytes");
    if (read.ok() && *read) ++line_number;
    if (!read.ok()) {
      return absl::Status(read.status().code(),
                          absl::StrCat(source_name, ":", line_number + 1, ": ",
                                       read.status().message()));
    }
    return read;
  };
  // The header: the first non-blank line.
  while (true) {
    absl::StatusOr<bool> read = next_line();
    if (!read.ok()) return read.status();
    if (!*read) break;
    if (!absl::StripAsciiWhitespace(line).empty()) break;
  }
  if (absl::StripAsciiWhitespace(line).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": empty, no header line"));
  }
  proto::RecordsFileHeader header;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // later versions may add header fields
  if (!google::protobuf::util::JsonStringToMessage(line, &header, options)
           .ok() ||
      header.format() != kRecordsFormatName) {
    return absl::InvalidArgumentError(absl::StrCat(
        source_name, ":", line_number, ": not a Lathe records file (expected ",
        RecordsFileHeaderLine(), ")"));
  }
  if (header.version() > kRecordsFormatVersion || header.version() < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(source_name, ": records format version ", header.version(),
                     "; this Lathe reads version ", kRecordsFormatVersion));
  }
  // Version 1 files have records only: a line that looks like a batch is
  // refused as not a record.
  const bool has_batches = header.version() >= 2;
  return db.CommitFrom(
      [&](const Database::RecordSink& sink,
          const Database::BatchSink& batch_sink) -> absl::Status {
        while (true) {
          absl::StatusOr<bool> read = next_line();
          if (!read.ok()) return read.status();
          if (!*read) break;
          if (absl::StripAsciiWhitespace(line).empty()) continue;
          const std::string where = absl::StrCat(source_name, ":", line_number);
          if (has_batches && IsBatchLine(line)) {
            absl::StatusOr<TuningBatch> batch = BatchFromJsonLine(line, where);
            if (!batch.ok()) return batch.status();
            absl::Status stored = batch_sink(*batch);
            if (!stored.ok()) {
              return absl::Status(stored.code(),
                                  absl::StrCat(where, ": ", stored.message()));
            }
            continue;
          }
          absl::StatusOr<proto::Record> record =
              RecordFromJsonLine(line, where);
          if (!record.ok()) return record.status();
          if (check) {
            if (absl::Status st = check(*record); !st.ok()) {
              return absl::Status(st.code(),
                                  absl::StrCat(where, ": ", st.message()));
            }
          }
          absl::Status stored = sink(*record);
          if (!stored.ok()) {
            return absl::Status(stored.code(),
                                absl::StrCat(where, ": ", stored.message()));
          }
        }
        if (in.bad())
          return absl::DataLossError(absl::StrCat(source_name, ": read error"));
        return absl::OkStatus();
      });
}

}  // namespace lathe::db

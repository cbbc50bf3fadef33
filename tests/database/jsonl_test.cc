// Tests of database/jsonl.h: export and import of records as JSON lines.
#include "database/jsonl.h"

#include <memory>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::CreateMode;
using testing::DefaultTarget;
using testing::MakeRecord;
using testing::MakeTarget;
using testing::OkRecord;
using testing::TempFolder;
using testing::WithoutId;

bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

class JsonlTest : public ::testing::Test {
 protected:
  std::unique_ptr<Database> Open(const std::string& name) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(folder_.File(name), CreateMode());
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }

  static std::vector<proto::Record> All(Database& db) {
    std::vector<proto::Record> records;
    absl::Status read = db.ForEachRecord([&](const proto::Record& record) {
      records.push_back(WithoutId(record));
      return absl::OkStatus();
    });
    EXPECT_TRUE(read.ok()) << read;
    return records;
  }

  // Every kind of record: OK and failed, jobs, several targets, odd text.
  static std::vector<proto::Record> Varied() {
    std::vector<proto::Record> records;
    records.push_back(
        MakeRecord("w1", DefaultTarget(), "h1", {1.0 / 3, 0.1 + 0.2, 1e-300}));
    proto::Record wrong = MakeRecord("w1", DefaultTarget(), "h2", {2e-3, 3e-3},
                                     proto::MEASURE_WRONG_RESULT);
    wrong.set_error("output differs: \"C\"[3] = 1e+10\n\ttab \xc3\xa9");
    wrong.set_job("job-1");
    records.push_back(wrong);
    proto::Record build = MakeRecord("w2", MakeTarget("haswell", {"avx2"}, 1),
                                     "h3", {}, proto::MEASURE_BUILD_ERROR);
    build.set_job("job-2");
    build.set_measured_at_unix_ms(int64_t{1} << 53 |
                                  1);  // beyond a double's integers
    records.push_back(build);
    records.push_back(OkRecord("w2", DefaultTarget(), "h4", 123.456));
    return records;
  }

  TempFolder folder_;
};

TEST_F(JsonlTest, ExportThenImportIntoAFreshDatabaseGivesTheSameRecords) {
  std::unique_ptr<Database> source = Open("source.db");
  ASSERT_NE(source, nullptr);
  const std::vector<proto::Record> records = Varied();
  ASSERT_TRUE(source->Commit(records).ok());

  std::stringstream file;
  absl::StatusOr<ExportCounts> exported = ExportJsonl(*source, file);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->records, static_cast<int64_t>(records.size()));
  EXPECT_EQ(exported->batches, 0);
  const std::vector<std::string> lines =
      absl::StrSplit(file.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), records.size() + 1);
  EXPECT_EQ(lines[0], RecordsFileHeaderLine());
  // Row ids are not part of an export.
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].find("\"id\""), std::string::npos);

  std::unique_ptr<Database> dest = Open("dest.db");
  ASSERT_NE(dest, nullptr);
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*dest, file, "export.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->added, static_cast<int64_t>(records.size()));
  const std::vector<proto::Record> round_trip = All(*dest);
  ASSERT_EQ(round_trip.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(Bytes(round_trip[i]), Bytes(records[i]))
        << i << ": " << round_trip[i].DebugString();
  }
  absl::StatusOr<std::vector<proto::Job>> jobs = dest->Jobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->size(), 2u);
  absl::StatusOr<CheckReport> check = dest->Check();
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok());

  // Importing the export into its own source adds nothing.
  std::stringstream again(file.str());
  imported = ImportJsonl(*source, again, "export.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->added, 0);
  EXPECT_EQ(imported->duplicates, static_cast<int64_t>(records.size()));
}

// A batch row of task (w1, the default target), or of `workload`.
TuningBatch BatchOf(const std::string& job, int64_t finished_ms,
                    std::optional<double> accuracy,
                    const std::string& workload = "w1") {
  TuningBatch batch;
  batch.job = job;
  batch.workload_key = workload;
  batch.target = DefaultTarget().canonical();
  batch.finished_ms = finished_ms;
  batch.trials = 8;
  batch.accuracy = accuracy;
  batch.trained_on = accuracy ? 16 : 0;
  return batch;
}

// What a batch row says, but for its index.
std::string Content(const TuningBatch& b) {
  return absl::StrCat(b.job, "|", b.workload_key, "|", b.target, "|",
                      b.finished_ms, "|", b.trials, "|",
                      b.accuracy ? absl::StrCat(*b.accuracy) : "none", "|",
                      b.trained_on);
}

TEST_F(JsonlTest, BatchesTravelWithTheRecordsAndAreNumberedInTheDestination) {
  std::unique_ptr<Database> source = Open("source.db");
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->Commit(Varied()).ok());
  // Job-1's two batches (the first untrained), one of a run without a job,
  // and an accuracy a decimal does not write exactly.
  const std::vector<TuningBatch> batches = {
      BatchOf("job-1", 1000, std::nullopt), BatchOf("", 1500, 0.5),
      BatchOf("job-1", 2000, 1.0 / 3)};
  for (const TuningBatch& batch : batches)
    ASSERT_TRUE(source->Commit({}, &batch).ok());

  std::stringstream file;
  absl::StatusOr<ExportCounts> exported = ExportJsonl(*source, file);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->batches, 3);
  const std::vector<std::string> lines =
      absl::StrSplit(file.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1 + Varied().size() + 3);
  EXPECT_EQ(lines[0], "{\"format\":\"lathe-records\",\"version\":2}");
  // After the records, in the order stored, without an index.
  for (size_t i = 0; i < 3; ++i) {
    const std::string& line = lines[1 + Varied().size() + i];
    EXPECT_TRUE(IsBatchLine(line)) << line;
    EXPECT_EQ(line.find("index"), std::string::npos) << line;
  }

  // The destination holds a batch of job-1 already: the imported ones
  // follow it, in the file's order.
  std::unique_ptr<Database> dest = Open("dest.db");
  ASSERT_NE(dest, nullptr);
  ASSERT_TRUE(dest->Commit({OkRecord("w1", DefaultTarget(), "d", 1e-3)}).ok());
  const TuningBatch own = BatchOf("job-1", 500, 0.9);
  ASSERT_TRUE(dest->Commit({}, &own).ok());
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*dest, file, "export.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->batches_added, 3);
  EXPECT_EQ(imported->batch_duplicates, 0);
  const std::string target = DefaultTarget().canonical();
  std::vector<TuningBatch> job1 = dest->Batches("w1", target, "job-1").value();
  ASSERT_EQ(job1.size(), 3u);
  EXPECT_EQ(Content(job1[0]), Content(own));
  EXPECT_EQ(Content(job1[1]), Content(batches[0]));
  EXPECT_EQ(Content(job1[2]), Content(batches[2]));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(job1[i].index, i);
  std::vector<TuningBatch> all = dest->Batches("w1", target).value();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(Content(all[2]), Content(batches[1]));
  EXPECT_EQ(all[2].index, 0);  // the first of the runs without a job

  // The same file again: its batches are copies, and nothing is added.
  std::stringstream again(file.str());
  imported = ImportJsonl(*dest, again, "export.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->batches_added, 0);
  EXPECT_EQ(imported->batch_duplicates, 3);
  EXPECT_EQ(dest->Batches("w1", target)->size(), 4u);
}

TEST_F(JsonlTest, AVersion1FileImportsWithoutBatchesAndHasNoBatchLines) {
  const std::string record =
      *RecordToJsonLine(OkRecord("w1", DefaultTarget(), "h", 1e-3));
  const std::string batch = *BatchToJsonLine(BatchOf("j", 1000, 0.5));
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  std::stringstream old_file;
  old_file << "{\"format\":\"lathe-records\",\"version\":1}\n"
           << record << "\n";
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*db, old_file, "v1.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->added, 1);
  EXPECT_EQ(imported->batches_added, 0);
  // Version 1 had no batch lines: one there is not a record.
  std::stringstream mixed;
  mixed << "{\"format\":\"lathe-records\",\"version\":1}\n" << batch << "\n";
  imported = ImportJsonl(*db, mixed, "v1.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_TRUE(Contains(imported.status(), "v1.jsonl:2: not a record"))
      << imported.status();
  EXPECT_TRUE(db->Batches("w1", DefaultTarget().canonical())->empty());
}

TEST_F(JsonlTest, ABadBatchLineFailsTheImportNamingItAndImportsNothing) {
  const std::string record =
      *RecordToJsonLine(OkRecord("w1", DefaultTarget(), "h", 1e-3));
  auto with = [](const std::string& line, const std::string& from,
                 const std::string& to) {
    const size_t at = line.find(from);
    EXPECT_NE(at, std::string::npos) << line;
    std::string changed = line;
    if (at != std::string::npos) changed.replace(at, from.size(), to);
    return changed;
  };
  const std::string good = *BatchToJsonLine(BatchOf("j", 1000, 0.5));
  const struct {
    std::string name;
    std::string batch_line;
    bool before_records;
    std::string words;
  } cases[] = {
      {"accuracy beyond 1", with(good, "0.5", "1.5"), false, "accuracy is 1.5"},
      {"accuracy not a number", with(good, "0.5", "\"NaN\""), false,
       "accuracy is nan"},
      {"no trials", with(good, "\"trials\":\"8\"", "\"trials\":\"0\""), false,
       "trials is 0"},
      {"negative rows",
       with(good, "\"trained_on\":\"16\"", "\"trained_on\":\"-1\""), false,
       "trained_on is negative"},
      {"unknown field", with(good, "\"trials\"", "\"joules\":1,\"trials\""),
       false, "not a batch"},
      {"unknown workload", with(good, "\"w1\"", "\"w9\""), false,
       "workload w9: no such workload"},
      {"unknown target", with(good, "znver4", "znver9"), false,
       "no such target"},
      {"before its task's records", good, true,
       "workload w1: no such workload"},
      {"not an object", "{\"batch\": 3}", false, "not a batch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::stringstream file;
    file << RecordsFileHeaderLine() << "\n";
    if (c.before_records) file << c.batch_line << "\n";
    file << record << "\n";
    if (!c.before_records) file << c.batch_line << "\n";
    std::unique_ptr<Database> db = Open(absl::StrCat("bad", &c - cases, ".db"));
    ASSERT_NE(db, nullptr);
    absl::StatusOr<CommitResult> imported =
        ImportJsonl(*db, file, "shard.jsonl");
    ASSERT_FALSE(imported.ok());
    EXPECT_TRUE(Contains(imported.status(),
                         c.before_records ? "shard.jsonl:2" : "shard.jsonl:3"))
        << imported.status();
    EXPECT_TRUE(Contains(imported.status(), c.words)) << imported.status();
    EXPECT_EQ(db->GetStats()->records, 0);
    EXPECT_TRUE(db->Batches("w1", DefaultTarget().canonical())->empty());
  }
}

TEST_F(JsonlTest, ALineThatIsNotJsonFailsTheImportNamingItAndImportsNothing) {
  std::stringstream file;
  file << RecordsFileHeaderLine() << "\n";
  for (const proto::Record& record : Varied())
    file << *RecordToJsonLine(record) << "\n";
  file << "\n{\"workload_key\": \"w9\", oops\n";
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<CommitResult> imported = ImportJsonl(*db, file, "shard.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  // Header, four records, a blank line: the bad line is the seventh.
  EXPECT_TRUE(Contains(imported.status(), "shard.jsonl:7"))
      << imported.status();
  EXPECT_EQ(db->GetStats()->records, 0);
  EXPECT_EQ(db->GetStats()->jobs, 0);
}

TEST_F(JsonlTest, AnInvalidRecordFailsTheImportNamingItsLine) {
  proto::Record invalid = OkRecord("w", DefaultTarget(), "h", 1e-3);
  invalid.clear_times_s();
  std::stringstream file;
  file << RecordsFileHeaderLine() << "\n"
       << *RecordToJsonLine(OkRecord("w", DefaultTarget(), "g", 1e-3)) << "\n"
       << *RecordToJsonLine(invalid) << "\n";
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<CommitResult> imported = ImportJsonl(*db, file, "shard.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_TRUE(Contains(imported.status(), "shard.jsonl:3"))
      << imported.status();
  EXPECT_TRUE(Contains(imported.status(), "times_s")) << imported.status();
  EXPECT_EQ(db->GetStats()->records, 0);
}

TEST_F(JsonlTest, AnUnknownFieldIsRefusedRatherThanDropped) {
  std::string line =
      *RecordToJsonLine(OkRecord("w", DefaultTarget(), "h", 1e-3));
  ASSERT_EQ(line.back(), '}');
  line.insert(line.size() - 1, ",\"energy_joules\":3.5");
  std::stringstream file;
  file << RecordsFileHeaderLine() << "\n" << line << "\n";
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<CommitResult> imported = ImportJsonl(*db, file, "new.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_TRUE(Contains(imported.status(), "new.jsonl:2")) << imported.status();
  EXPECT_TRUE(Contains(imported.status(), "energy_joules"))
      << imported.status();
  EXPECT_EQ(db->GetStats()->records, 0);
}

TEST_F(JsonlTest, ANewerFormatVersionIsRefused) {
  std::stringstream file;
  file << "{\"format\":\"lathe-records\",\"version\":"
       << kRecordsFormatVersion + 1 << "}\n"
       << *RecordToJsonLine(OkRecord("w", DefaultTarget(), "h", 1e-3)) << "\n";
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*db, file, "future.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(imported.status(), "future.jsonl")) << imported.status();
  EXPECT_TRUE(Contains(imported.status(),
                       absl::StrCat("version ", kRecordsFormatVersion + 1)))
      << imported.status();
  EXPECT_EQ(db->GetStats()->records, 0);
}

TEST_F(JsonlTest, AFileWithoutTheHeaderIsRefused) {
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  std::stringstream headless;
  headless << *RecordToJsonLine(OkRecord("w", DefaultTarget(), "h", 1e-3))
           << "\n";
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*db, headless, "headless.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(imported.status(), "headless.jsonl:1"))
      << imported.status();

  std::stringstream empty("\n\n");
  imported = ImportJsonl(*db, empty, "empty.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_TRUE(Contains(imported.status(), "empty.jsonl")) << imported.status();
  EXPECT_EQ(db->GetStats()->records, 0);
}

TEST_F(JsonlTest, BlankLinesAreIgnored) {
  std::stringstream file;
  file << "\n"
       << RecordsFileHeaderLine() << "\n\n   \n"
       << *RecordToJsonLine(OkRecord("w", DefaultTarget(), "h", 1e-3))
       << "\n\n";
  std::unique_ptr<Database> db = Open("dest.db");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<CommitResult> imported =
      ImportJsonl(*db, file, "spaced.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->added, 1);
}

TEST(RecordJsonLine, RoundTripsWithoutTheRowId) {
  proto::Record record = OkRecord("w", DefaultTarget(), "h", 1e-3);
  record.set_id(77);
  absl::StatusOr<std::string> line = RecordToJsonLine(record);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->find('\n'), std::string::npos);
  EXPECT_NE(line->find("\"workload_key\""), std::string::npos)
      << *line;  // proto field names
  absl::StatusOr<proto::Record> parsed = RecordFromJsonLine(*line, "x:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(Bytes(*parsed), Bytes(WithoutId(record)));
}

TEST(RecordJsonLine, ALineCarryingARowIdIsRefused) {
  absl::StatusOr<proto::Record> parsed =
      RecordFromJsonLine("{\"workload_key\":\"w\",\"id\":\"5\"}", "x.jsonl:9");
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(Contains(parsed.status(), "x.jsonl:9")) << parsed.status();
}

// An endless input without a newline (/dev/zero): the import stops after
// kMaxRecordLineBytes + 1 bytes and names the limit.
class EndlessZeros : public std::streambuf {
 public:
  int_type underflow() override {
    if (served_ > (size_t{64} << 20)) return traits_type::eof();
    served_ += sizeof(buffer_);
    setg(buffer_, buffer_, buffer_ + sizeof(buffer_));
    return traits_type::to_int_type(buffer_[0]);
  }
  size_t served() const { return served_; }

 private:
  char buffer_[1 << 16] = {};
  size_t served_ = 0;
};

TEST_F(JsonlTest, ALineBeyondTheLimitIsRefusedWithoutReadingItWhole) {
  std::unique_ptr<Database> db = Open("zeros.db");
  ASSERT_NE(db, nullptr);
  EndlessZeros zeros;
  std::istream in(&zeros);
  absl::StatusOr<CommitResult> imported = ImportJsonl(*db, in, "/dev/zero");
  ASSERT_FALSE(imported.ok());
  EXPECT_TRUE(Contains(imported.status(), "/dev/zero:1: a line of more than"))
      << imported.status();
  EXPECT_TRUE(Contains(imported.status(), "kMaxRecordLineBytes"))
      << imported.status();
  EXPECT_LE(zeros.served(), kMaxRecordLineBytes + (size_t{1} << 16) + 1);
  // A line within the limit but not a record is echoed bounded.
  std::istringstream long_line(RecordsFileHeaderLine() + "\n" +
                               std::string(1 << 20, 'x') + "\n");
  imported = ImportJsonl(*db, long_line, "long.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_LT(imported.status().message().size(), 1000u) << imported.status();
}

}  // namespace
}  // namespace lathe::db

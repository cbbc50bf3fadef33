// Tests of database/jsonl.h: export and import of records as JSON lines.
#include "database/jsonl.h"

#include <memory>
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
  absl::StatusOr<int64_t> exported = ExportJsonl(*source, file);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(*exported, static_cast<int64_t>(records.size()));
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

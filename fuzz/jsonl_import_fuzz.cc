// libFuzzer target: `lathe db import`'s reader (database/jsonl.h). The input
// is a records file imported into a database in a temporary folder: it is
// committed whole or refused with a status, never a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "database/database.h"
#include "database/jsonl.h"

namespace {

lathe::db::Database& Db() {
  static lathe::db::Database* db = [] {
    char folder[] = "/tmp/lathe_jsonl_fuzz_XXXXXX";
    if (::mkdtemp(folder) == nullptr) __builtin_trap();
    absl::StatusOr<std::unique_ptr<lathe::db::Database>> opened =
        lathe::db::Database::Open(
            std::string(folder) + "/fuzz.db",
            lathe::db::OpenOptions{
                .mode = lathe::db::OpenOptions::Mode::kCreate,
                .durable = false,
                .max_size_bytes = int64_t{64} << 20});
    if (!opened.ok()) __builtin_trap();
    return opened->release();
  }();
  return *db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  (void)lathe::db::ImportJsonl(Db(), in, "<fuzz>");
  return 0;
}

// Database's cost models: one saved model per target (see database.h).
#include <optional>
#include <string>

#include "base/status_macros.h"
#include "database/database.h"
#include "database/database_internal.h"
#include "database/sqlite_connection.h"

namespace lathe::db {

absl::Status Database::PutCostModel(const proto::TargetInfo& target,
                                    const std::string& name,
                                    const std::string& model,
                                    int64_t trained_on_records) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
      WriteTransaction::Begin(*connection_);
  if (!transaction.ok()) return transaction.status();
  absl::StatusOr<int64_t> target_id = TargetId(target);
  if (!target_id.ok()) return target_id.status();
  absl::StatusOr<Statement*> put = connection_->Prepare(
      "INSERT OR REPLACE INTO cost_models(target_id, name, model, records, "
      "saved_ms) "
      "VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!put.ok()) return put.status();
  (*put)->BindInt(1, *target_id);
  (*put)->BindText(2, name);
  (*put)->BindBlob(3, model);
  (*put)->BindInt(4, trained_on_records);
  (*put)->BindInt(5, NowUnixMs());
  LATHE_RETURN_IF_ERROR((*put)->Run());
  return (*transaction)->Commit();
}

absl::StatusOr<std::optional<std::string>> Database::GetCostModel(
    const std::string& target, const std::string& name) {
  absl::StatusOr<Statement*> get = connection_->Prepare(
      "SELECT m.model FROM cost_models m JOIN targets t ON t.id = m.target_id "
      "WHERE t.canonical = ?1 AND m.name = ?2");
  if (!get.ok()) return get.status();
  (*get)->BindText(1, target);
  (*get)->BindText(2, name);
  absl::StatusOr<bool> row = (*get)->Step();
  if (!row.ok()) return row.status();
  std::optional<std::string> model;
  if (*row) model = (*get)->ColumnBlob(0);
  (*get)->Reset();
  return model;
}

}  // namespace lathe::db

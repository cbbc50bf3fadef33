#include "cli/db_command.h"

namespace lathe::cli {

void AddDbCommand(CLI::App& app) {
  CLI::App* db =
      app.add_subcommand("db",
                         "the tuning database: "
                         "best|top|list|stats|export|import|merge|prune|check");
  db->require_subcommand(1);
  AddDbLookupCommands(db);
  AddDbInfoCommands(db);
  AddDbTransferCommands(db);
}

}  // namespace lathe::cli

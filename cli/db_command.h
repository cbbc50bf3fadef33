// `lathe db ...`: look into, move and maintain the tuning database.
// The subcommands live in cli/db_*_commands.cc, grouped by what they do.
// Tests: tests/cli/db_commands_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddDbCommand(CLI::App& app);

// best, top
void AddDbLookupCommands(CLI::App* db);
// list, stats, check
void AddDbInfoCommands(CLI::App* db);
// export, import, merge, prune
void AddDbTransferCommands(CLI::App* db);

}  // namespace lathe::cli

// The `tessera` command-line tool: one function per subcommand, registered on a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

// Each Register* adds a subcommand; its callback sets *exit_code.
void RegisterStream(CLI::App& app, int* exit_code);
void RegisterRead(CLI::App& app, int* exit_code);
void RegisterInfo(CLI::App& app, int* exit_code);
void RegisterConvert(CLI::App& app, int* exit_code);

}  // namespace tessera::cli

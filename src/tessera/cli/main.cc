// Entry point of the `tessera` command-line tool.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessera/cli/commands.h"
#include "tessera/cli/spec_options.h"

int main(int argc, char** argv) {
  CLI::App app{"tessera: chunked, compressed, sharded N-dimensional arrays (Zarr v3, Neuroglancer precomputed, HDF5)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  int exit_code = 0;
  tessera::cli::RegisterStream(app, &exit_code);
  tessera::cli::RegisterRead(app, &exit_code);
  tessera::cli::RegisterInfo(app, &exit_code);
  tessera::cli::RegisterConvert(app, &exit_code);
  // A bare --shuffle before a positional argument stays HDF5's flag (see ArgsWithBareShuffle).
  const std::vector<std::string> args = tessera::cli::ArgsWithBareShuffle(argc, argv);
  std::vector<const char*> arg_pointers;
  for (const std::string& arg : args) arg_pointers.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Usage errors share the library's error prefix so scripts need match only one form.
    std::fprintf(stderr, "tessera: error: usage: %s\nRun with --help for more information.\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // A request larger than memory (e.g. a dataset whose header claims an enormous row).
    std::fprintf(stderr, "tessera: error: out of resources: not enough memory for this request\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: error: internal: %s\n", e.what());
    return 1;
  }
  return exit_code;
}

// pe-suite: verify and benchmark positional-encoding implementations against an exact reference.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common.h"
#include "pe/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"pe-suite: positional encodings checked against an exact reference", "pe-suite"};
  app.require_subcommand(1);
  int exit_code = pe::cli::kOk;
  pe::cli::add_run(app, exit_code);
  pe::cli::add_list(app, exit_code);
  pe::cli::add_verify(app, exit_code);
  pe::cli::add_export(app, exit_code);
  pe::cli::add_bench(app, exit_code);
  pe::cli::add_check(app, exit_code);
  pe::cli::add_compare(app, exit_code);
  pe::cli::add_census(app, exit_code);
  pe::cli::add_report(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return pe::cli::kUsage;
  } catch (const pe::cli::UsageError& e) {
    std::fprintf(stderr, "pe-suite: %s\n", e.what());
    return pe::cli::kUsage;
  } catch (const pe::InvalidArgument& e) {
    std::fprintf(stderr, "pe-suite: invalid %s: %s\n", e.parameter().c_str(), e.what());
    return pe::cli::kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pe-suite: %s\n", e.what());
    return pe::cli::kUsage;
  }
  return exit_code;
}

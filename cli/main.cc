// pe-suite: verify and benchmark positional-encoding implementations against an exact reference.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common.h"
#include "pe/errors.h"

namespace {

// An integer option's value that its 64-bit type cannot hold is refused as typed (the library would
// clamp it to the type's limit and a later message would echo that limit instead).
CLI::Validator fits_64_bits(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& text) -> std::string {
        const char *first = text.data(), *last = text.data() + text.size();
        std::from_chars_result r{};
        if (is_unsigned) {
          if (!text.empty() && text[0] == '-') return text + " is negative: expected an integer >= 0";
          std::uint64_t v = 0;
          r = std::from_chars(first, last, v);
        } else {
          std::int64_t v = 0;
          r = std::from_chars(first, last, v);
        }
        if (r.ec == std::errc::result_out_of_range)
          return text + " is out of range: expected a " + (is_unsigned ? "non-negative " : "") +
                 "64-bit integer";
        return "";  // anything else is the library's to read or refuse
      },
      "", "fits 64 bits");
}

void check_integer_ranges(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    if (type == "INT" || type == "UINT") o->check(fits_64_bits(type == "UINT"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_integer_ranges(*sub);
}

// The first word when it names no command: "unknown command 'frobnicate' (commands: run, list, ...)".
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::string list;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return "";
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  return std::string("unknown command '") + argv[1] + "' (commands: " + list + "; pe-suite --help)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pe-suite: positional encodings checked against an exact reference", "pe-suite"};
  app.require_subcommand(1);
  // The project's version, the one pe_suite.__version__ reports (CMake's project(VERSION)).
  app.set_version_flag("--version", "pe-suite " PE_VERSION, "print the version and exit");
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
  check_integer_ranges(app);
  if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "pe-suite: %s\n", unknown.c_str());
    return pe::cli::kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
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

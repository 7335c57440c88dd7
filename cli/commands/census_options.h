// The sampled census's options from the command line, shared by census and verify: the RoPE scaling and
// form flags, and each --hf-config of a sweep resolved into its own census (the census sweeps its own
// bases and head dims: a config gives the scaling and the form).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "form_options.h"
#include "hf_config_options.h"
#include "pe/harness/census.h"
#include "pe/harness/sweep.h"
#include "scaling_options.h"

namespace pe::cli {

struct CensusFlags {
  ScalingFlags scaling;
  FormFlags form;
  HfConfigFlags hf;
};

// `base` under the flags' scaling and form: UsageError naming the flag for a value the census cannot take.
census::Options with_flags(census::Options base, const ScalingFlags& scaling, const FormFlags& form);

// One census per config: each --hf-config path (labelled as given: census::Options::config), or the flags
// alone when none is given, its resolution printed and its selection checked (check_census_selection). A
// UsageError for an empty path or one given twice; an error of one config among several names it.
std::vector<census::Options> options_per_config(const census::Options& base, const CensusFlags& flags,
                                                const CLI::App& cmd);

// Before anything is swept: the selection holds an instance the options apply to, and every family's
// dims fit them (a LongRoPE list, a partial factor). UsageError naming the flag.
void check_census_selection(const census::Options& options);

// Every config's census, run in turn, its table printed (under the config's path when there are several):
// whole up to 40 instances, else its failing rows and where every row is (`every_row_at`), so that a run's
// summary is not pushed off the screen by hundreds of passing rows.
struct CensusRuns {
  std::vector<census::Options> options;
  std::vector<nlohmann::json> documents;  // census::to_document of each
  std::size_t failed = 0, total = 0;      // instances (config x instance pairs) outside / all
};
CensusRuns run_per_config(std::vector<census::Options> runs, const std::string& every_row_at);

// The runs as a sweep's document: the header's variant, effort, limit, configs, loaded plugins and shard from
// the runs (the caller adds what else it knows: seed, properties, selection), each census with "selected".
nlohmann::json sweep_document(const CensusRuns& runs, sweep::Header header,
                              const std::vector<sweep::PropertyVerdict>& properties = {});

}  // namespace pe::cli

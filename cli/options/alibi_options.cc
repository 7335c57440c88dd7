#include "alibi_options.h"

#include "args.h"
#include "names.h"

namespace pe::cli {
namespace {

std::vector<std::int64_t> range_positions(const std::string& range, const char* flag) {
  const auto [a, b] = parse_range(range, flag);
  std::vector<std::int64_t> out;
  for (std::int64_t p = a; p < b; ++p) out.push_back(p);
  return out;
}

}  // namespace

void add_alibi_options(CLI::App& cmd, AlibiFlags& f) {
  cmd.add_option("--heads", f.spec.heads, "ALiBi: number of heads (check: default the data's)");
  cmd.add_option("--max-bias", f.spec.max_bias, "ALiBi: max_bias b of the slopes 2^(-b·k/n') (default 8)");
  cmd.add_option("--alibi-slopes", f.slopes,
                 "ALiBi: interpolated (the paper, HF, ggml, vLLM) or direct (2^(-b(h+1)/n))")
      ->capture_default_str();
  cmd.add_option("--alibi-form", f.form, "ALiBi: causal -m(i-j), symmetric -m|i-j|, or bloom m·j")
      ->capture_default_str();
  cmd.add_option("--queries", f.queries_range, "ALiBi: query positions, half-open range A:B");
  cmd.add_option("--keys", f.keys_range, "ALiBi: key positions, half-open range C:D");
  cmd.add_flag("--slopes-only", f.slopes_only, "ALiBi export: the [heads] slopes instead of the bias table");
}

void read_alibi_flags(const CLI::App& cmd, AlibiFlags& f) {
  const check::Names names = flag_names();
  check::AlibiSpec& s = f.spec;
  if (cmd.count("--alibi-slopes") > 0) s.slopes = check::parse_slopes(f.slopes, names);
  if (cmd.count("--alibi-form") > 0) s.form = check::parse_alibi_form(f.form, names);
  if (cmd.count("--queries") > 0) s.queries = range_positions(f.queries_range, "--queries");
  if (cmd.count("--keys") > 0) s.keys = range_positions(f.keys_range, "--keys");
  if (cmd.count("--slopes-only") > 0) s.slopes_only = f.slopes_only;
}

void reject_alibi_flags(const AlibiFlags& f, const std::string& why) {
  check::reject_alibi(f.spec, flag_names(), why);
}

AlibiParams to_alibi_params(const AlibiFlags& f, std::int64_t heads) {
  return check::to_alibi_params(f.spec, heads, flag_names());
}

}  // namespace pe::cli

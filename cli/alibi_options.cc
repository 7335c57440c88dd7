#include "alibi_options.h"

#include <fmt/format.h>

#include "args.h"
#include "pe/errors.h"

namespace pe::cli {
namespace {
constexpr const char* kAlibiFlags[] = {"--heads",   "--max-bias", "--alibi-slopes", "--alibi-form",
                                       "--queries", "--keys",     "--slopes-only"};
}  // namespace

void add_alibi_options(CLI::App& cmd, AlibiFlags& f) {
  cmd.add_option("--heads", f.heads, "ALiBi: number of heads (check: default the data's)");
  cmd.add_option("--max-bias", f.max_bias, "ALiBi: max_bias b of the slopes 2^(-b·k/n')")
      ->capture_default_str();
  cmd.add_option("--alibi-slopes", f.slopes,
                 "ALiBi: interpolated (the paper, HF, ggml, vLLM) or direct (2^(-b(h+1)/n))")
      ->capture_default_str();
  cmd.add_option("--alibi-form", f.form, "ALiBi: causal -m(i-j), symmetric -m|i-j|, or bloom m·j")
      ->capture_default_str();
  cmd.add_option("--queries", f.queries, "ALiBi: query positions, half-open range A:B");
  cmd.add_option("--keys", f.keys, "ALiBi: key positions, half-open range C:D");
  cmd.add_flag("--slopes-only", f.slopes_only, "ALiBi export: the [heads] slopes instead of the bias table");
}

void note_given_alibi_flags(const CLI::App& cmd, AlibiFlags& f) {
  for (const char* flag : kAlibiFlags) {
    const CLI::Option* o = cmd.get_option_no_throw(flag);
    if (o != nullptr && o->count() > 0) f.given.insert(flag);
  }
}

void reject_alibi_flags(const AlibiFlags& f, const std::string& why) {
  if (!f.given.empty()) throw UsageError(*f.given.begin() + ": " + why);
}

AlibiParams to_alibi_params(const AlibiFlags& f, std::int64_t heads) {
  AlibiParams p{.n_heads = heads, .max_bias = f.max_bias};
  const auto slopes = parse_alibi_slopes(f.slopes);
  if (!slopes) throw UsageError("--alibi-slopes: interpolated or direct, got '" + f.slopes + "'");
  const auto form = parse_alibi_form(f.form);
  if (!form) throw UsageError("--alibi-form: causal, symmetric or bloom, got '" + f.form + "'");
  p.slopes = *slopes;
  p.form = *form;
  try {
    AlibiPlan{p};
  } catch (const InvalidArgument& e) {
    throw UsageError(std::string(e.parameter() == "n_heads" ? "--heads" : "--max-bias") + ": " + e.what());
  }
  return p;
}

std::vector<std::int64_t> alibi_positions(const std::string& range, const char* flag) {
  if (range.empty()) throw UsageError(std::string(flag) + ": give the positions as a range A:B");
  const auto [a, b] = parse_range(range, flag);
  std::vector<std::int64_t> out;
  for (std::int64_t p = a; p < b; ++p) out.push_back(p);
  return out;
}

}  // namespace pe::cli

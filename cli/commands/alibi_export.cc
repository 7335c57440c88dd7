#include "alibi_export.h"

#include <fmt/format.h>

#include "args.h"
#include "common.h"
#include "pe/api.h"
#include "pe/check/golden.h"
#include "pe/harness/typed_buffer.h"

namespace pe::cli {

AlibiExport export_alibi(const AlibiFlags& flags, bool reference, const std::string& variant, DType dtype) {
  if (!flags.spec.heads) throw UsageError("--heads: required for --family alibi");
  const AlibiParams params = to_alibi_params(flags, *flags.spec.heads);
  const AlibiPlan plan(params);
  AlibiExport e;
  std::vector<std::int64_t> queries = flags.spec.queries.value_or(std::vector<std::int64_t>{}),
                            keys = flags.spec.keys.value_or(std::vector<std::int64_t>{});
  if (flags.slopes_only) {
    if (!queries.empty() || !keys.empty())
      throw UsageError("--slopes-only: the slopes have no positions (drop --queries and --keys)");
    e.shape = {plan.n_heads()};
  } else {
    if (queries.empty()) throw UsageError("--queries: give the positions as a range A:B");
    if (keys.empty()) throw UsageError("--keys: give the positions as a range A:B");
    e.shape = {plan.n_heads(), queries.size(), keys.size()};
  }
  // Each value is built as a double and once more in the output type, before anything is allocated.
  const std::size_t n = output_values({{"--heads", plan.n_heads()},
                                       {"--queries", flags.slopes_only ? 1 : queries.size()},
                                       {"--keys", flags.slopes_only ? 1 : keys.size()}},
                                      sizeof(double) + size_of(dtype));
  e.values.resize(n);
  if (reference) {
    e.values = check::golden_alibi(params, queries, keys, flags.slopes_only, dtype);
    return e;
  }
  const Variant& v = *find_variant(variant);
  harness::TypedBuffer y(dtype, n);
  if (flags.slopes_only) {
    alibi_slopes(v, plan, y.view());
  } else {
    alibi_bias(v, plan, queries, keys, y.view());
  }
  for (std::size_t i = 0; i < n; ++i) e.values[i] = y.get(i);
  return e;
}

}  // namespace pe::cli

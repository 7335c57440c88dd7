#include "pe/harness/census.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

#include "pe/contract.h"
#include "pe/errors.h"
#include "pe/harness/contract_json.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/pieces.h"
#include "pe/harness/plugin.h"
#include "pe/harness/run.h"
#include "pe/harness/worker.h"
#include "pe/ref/reference.h"
#include "pe/variant.h"

namespace pe::census {
namespace {

const std::span<const std::int64_t> kEdges = harness::band_edges();

std::uint64_t fnv1a(const std::string& s, std::uint64_t salt) {
  std::uint64_t h = 1469598103934665603ull ^ salt;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Band ends, then log-uniform positions between them; a function of the seed only.
std::vector<std::int64_t> band_positions(std::int64_t lo, std::int64_t hi, std::size_t count,
                                         std::uint64_t seed) {
  std::vector<std::int64_t> p = {lo, hi};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(std::log1p(static_cast<double>(lo)),
                                           std::log1p(static_cast<double>(hi)));
  while (p.size() < count) {
    p.push_back(std::clamp<std::int64_t>(std::llround(std::expm1(u(rng))), lo, hi));
  }
  return p;
}

}  // namespace

std::vector<std::int64_t> grid_dims(Effort effort) {
  return effort == Effort::Full ? std::vector<std::int64_t>{64, 128, 1024} : std::vector<std::int64_t>{128};
}

std::int64_t rotary_dim_of(const Options& o, std::int64_t head_dim) {
  if (o.rotary_offset != 0) return head_dim - o.rotary_offset;
  return o.partial_rotary_factor != 0 ? partial_rotary_dim(head_dim, o.partial_rotary_factor) : head_dim;
}

std::size_t shard_of(const std::string& instance_name, std::size_t shard_count) {
  return static_cast<std::size_t>(fnv1a(instance_name, 0) % std::max<std::size_t>(1, shard_count));
}

std::string shard_key(const std::string& config, const std::string& instance_name) {
  return config.empty() ? instance_name : config + "\n" + instance_name;
}

std::optional<std::pair<std::size_t, std::size_t>> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash == std::string::npos || !digits(text.substr(0, slash)) || !digits(text.substr(slash + 1)))
    return std::nullopt;
  const std::size_t index = std::stoul(text.substr(0, slash)), count = std::stoul(text.substr(slash + 1));
  if (count == 0 || index >= count || count > kMaxShards) return std::nullopt;
  return std::pair{index, count};
}

bool InstanceResult::within_contract() const {
  return fault.empty() && runs.differing == 0 &&
         std::all_of(bands.begin(), bands.end(), [](const harness::BandStats& b) {
           // A band the contract's budget cannot judge promises nothing (measure.h).
           return b.max_ratio.value <= 1.0 && !b.undecidable_band();
         });
}

namespace {

// 600 rows of 32 channels (at least two refreshes of a stateful variant: 515 rows for the exact
// variants' 256): a drift of 1e-9 per row then moves about one bfloat16 rounding per band between the
// whole run and its pieces (dim·Σ offset·rows·3e-7 = 32·(200² + 200·400)·3e-7), cheaply: a run's cost
// goes with rows·dim, what it reveals with rows²·dim.
constexpr std::int64_t kRunRows = 600;
constexpr std::int64_t kRunDim = 32;

// A run from a drawn start in [lo, hi], whole and split at the direct rows nearest its thirds; the
// last row and the rows around each refresh are compared with the reference.
void check_run(const harness::Instance& in, std::int64_t lo, std::int64_t hi, std::uint64_t seed,
               harness::Measurement& m, RunCheck& out) {
  const std::int64_t state = in.contract().state_rows;
  const std::int64_t length = std::min(std::max(kRunRows, 2 * state + 3), hi - lo + 1);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(length));
  std::iota(positions.begin(), positions.end(),
            std::uniform_int_distribution<std::int64_t>(lo, hi - length + 1)(rng));
  const harness::FamilyTraits& traits = harness::traits_of(in.variant->family());
  std::vector<double> x;
  if (traits.reads_data) {
    harness::TypedBuffer b(in.dtype, positions.size() * harness::elements_per_position(in, kRunDim, 1));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < b.size(); ++i) b.set(i, u(rng));
    x = b.values();
  }
  const std::vector<std::size_t> direct = harness::direct_rows(positions, state);
  std::vector<std::size_t> splits;
  for (std::size_t third : {positions.size() / 3, 2 * positions.size() / 3}) {
    const auto at = std::lower_bound(direct.begin(), direct.end(), third);
    if (at != direct.end() && *at != 0 && (splits.empty() || splits.back() < *at)) splits.push_back(*at);
  }
  const harness::TypedBuffer whole = harness::run_call(in, kRunDim, 1e4, positions, 1, x);
  const harness::TypedBuffer pieces = harness::run_in_pieces(in, kRunDim, 1e4, positions, 1, x, splits);
  const std::vector<std::size_t> differing = harness::differing_elements(whole, pieces);
  if (!differing.empty() && out.differing == 0)
    out.first_position = positions[differing.front() / harness::elements_per_position(in, kRunDim, 1)];
  out.differing += differing.size();
  out.rows += positions.size();
  std::set<std::size_t> rows = {positions.size() - 1};
  for (std::size_t r : direct) {
    if (r == 0 || state == 0 || rows.size() > 6) continue;
    rows.insert(r);
    rows.insert(r - 1);
  }
  traits.measure(in, kRunDim, 1e4, positions, 1, x, whole, harness::into(m),
                 {{rows.begin(), rows.end()}, harness::bench_sample(1, kRunDim / 2).pairs});
}

}  // namespace

bool rope_only(const Options& options) {
  return scales(options.scaling) || options.partial_rotary_factor != 0 || !options.form.is_text() ||
         options.rotary_offset != 0;
}

std::vector<std::int64_t> rope_head_dims(const Options& options) {
  std::vector<std::int64_t> grid = grid_dims(options.effort);
  if (!options.form.is_text() || options.rotary_offset != 0) {  // the head dims the form fits
    std::vector<std::int64_t> fit;
    std::string last, last_parameter = "head_dim";
    for (std::int64_t d : grid) {
      RopeParams p{d, rotary_dim_of(options, d), 1e4, Layout::HalfSplit, options.scaling};
      p.form = options.form;
      p.rotary_offset = options.rotary_offset;
      try {
        RopePlan plan(p);
        fit.push_back(d);
      } catch (const InvalidArgument& e) {
        last = e.what();
        last_parameter = e.parameter();
      }
    }
    if (fit.empty()) throw InvalidArgument(last_parameter, last + " (at every head dim of the census grid)");
    grid = fit;
  }
  for (std::int64_t d : grid) rotary_dim_of(options, d);  // throws naming partial_rotary_factor
  if (options.scaling.type != RopeScalingType::LongRope) return grid;
  std::vector<std::int64_t> out;
  std::string dims;
  for (std::int64_t d : grid) {
    const std::int64_t rotary = rotary_dim_of(options, d);
    if (static_cast<std::size_t>(rotary / 2) == options.scaling.short_factor.size()) out.push_back(d);
    dims += (dims.empty() ? "" : ", ") + std::to_string(d) +
            " (rotary_dim/2 = " + std::to_string(rotary / 2) + ")";
  }
  if (out.empty()) {
    throw InvalidArgument("short_factor", "short_factor has " +
                                              std::to_string(options.scaling.short_factor.size()) +
                                              " entries; the census's head dims are " + dims +
                                              " and longrope needs one entry per pair");
  }
  return out;
}

std::vector<std::string> selection(const Options& options) {
  std::vector<std::string> out;
  for (const harness::Instance& in : harness::instances_matching(options.glob))
    if (harness::traits_of(in.variant->family()).census_applies(options)) out.push_back(in.name());
  return out;
}

std::vector<InstanceResult> run(const Options& options) {
  const bool full = options.effort == Effort::Full;
  const std::vector<double> bases = full ? std::vector<double>{1e4, 5e5, 1e6} : std::vector<double>{1e4};
  const std::size_t per_band = full ? 48 : 10;

  std::vector<InstanceResult> results;
  std::vector<harness::Instance> mine = harness::instances_matching(options.glob);
  std::erase_if(mine, [&](const harness::Instance& in) {
    return !harness::traits_of(in.variant->family()).census_applies(options) ||
           shard_of(shard_key(options.config, in.name()), options.shard_count) != options.shard_index;
  });
  // Each family's dims, once, before any sweep: an option no dim fits fails fast.
  std::map<Family, std::vector<std::int64_t>> dims;
  for (const harness::Instance& in : mine) {
    const harness::FamilyTraits& t = harness::traits_of(in.variant->family());
    if (!dims.count(t.family)) dims[t.family] = t.census_dims(options);
  }
  for (const harness::Instance& in : mine) {
    if (options.on_instance) options.on_instance(results.size(), mine.size(), in.name());
    const harness::FamilyTraits& traits = harness::traits_of(in.variant->family());
    InstanceResult result{in, {}, {}, {}};
    const std::int64_t limit = options.max_position > 0 ? options.max_position : in.contract().max_position;
    const auto sweep = [&](harness::Measurement& m, RunCheck& runs, const harness::Started& started) {
      if (traits.census_forms != nullptr && !rope_only(options)) {
        if (started) started("the census's timestep embeddings and odd dim");
        traits.census_forms(in, limit, fnv1a(in.name(), 0x7157), options, m);
      }
      for (std::size_t k = 0; k + 1 < std::size(kEdges) && kEdges[k] <= limit; ++k) {
        const std::int64_t lo = kEdges[k];
        const std::int64_t hi =
            k + 2 == std::size(kEdges) ? std::min(kEdges[k + 1], limit) : std::min(kEdges[k + 1] - 1, limit);
        for (std::int64_t dim : dims[traits.family]) {
          for (double base : bases) {
            const std::uint64_t seed = fnv1a(
                in.name(), (k << 32) ^ static_cast<std::uint64_t>(dim) ^ static_cast<std::uint64_t>(base));
            if (started)
              started(
                  fmt::format("the census cell of positions {}..{}, dim {}, base {:g}", lo, hi, dim, base));
            traits.census_cell(in, band_positions(lo, hi, per_band, seed), dim, base, seed, options, m);
          }
        }
        // The edges and runs, unscaled and at full rotary, in every other band (from 10^3 to 2^31: the
        // far band included) for a fifth more time than the grid alone.
        if (rope_only(options) || k % 2 == 0) continue;
        const std::uint64_t seed = fnv1a(in.name(), (k << 32) ^ 0xed9e);
        const std::vector<std::int64_t> p = band_positions(lo, hi, 4, seed);  // lo, hi, two drawn
        if (started) started(fmt::format("the edges and runs of positions {}..{}", lo, hi));
        traits.census_edges(in, {p[2], p[1], p[0], p[3]}, seed, m);  // up, down, up
        check_run(in, lo, hi, seed, m, runs);
      }
    };
    const auto fresh = [&] {
      return harness::Measurement(std::min(limit, kEdges[std::size(kEdges) - 1]), 0);
    };
    // An outside kernel first in a worker: a crash or hang there is the kernel's result, named.
    if (options.call_timeout_s > 0 && !is_builtin(*in.variant)) {
      result.fault = harness::in_worker(harness::kernel_origin_words(*in.variant) + in.name(),
                                        options.call_timeout_s, [&](const harness::Started& started) {
                                          harness::Measurement m = fresh();
                                          RunCheck runs;
                                          sweep(m, runs, started);
                                        });
      if (!result.fault.empty()) {
        results.push_back(std::move(result));
        continue;
      }
    }
    harness::Measurement m = fresh();
    std::string current;
    try {
      sweep(m, result.runs, [&](const std::string& what) { current = what; });
      result.bands = m.bands();
    } catch (const KernelFault& e) {  // the guard zones: a write outside the rows ends the sweep, named
      result.fault =
          fmt::format("{}{} (case: {})", harness::kernel_origin_words(*in.variant), e.what(), current);
      result.runs = {};
    }
    results.push_back(std::move(result));
  }
  return results;
}

namespace {
Worst worst(const harness::Extreme& w) { return {w.value, w.at.position, w.at.channel, w.at.dim, w.at.base}; }
// A measured number: null (NaN, an infinity) or absent reads as NaN.
double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}
}  // namespace

Band::Band(const harness::BandStats& b)
    : lo(b.lo),
      hi(b.hi),
      samples(b.samples),
      undecidable(b.undecidable),
      max_abs(worst(b.max_abs)),
      max_ulp(worst(b.max_ulp)),
      max_budget_ratio(worst(b.max_ratio)),
      budget_at_max_abs(b.budget_at_max_abs),
      p99_abs(b.p99_abs),
      p99_ulp(b.p99_ulp),
      verdict(b.verdict()) {}

void to_json(nlohmann::json& j, const Worst& w) {
  j = {
      {"value", w.value}, {"position", w.position}, {"channel", w.channel}, {"dim", w.dim}, {"base", w.base}};
}
void from_json(const nlohmann::json& j, Worst& w) {
  w = {number(j, "value"), j.value("position", std::int64_t{0}), j.value("channel", std::int64_t{0}),
       j.value("dim", std::int64_t{0}), number(j, "base")};
}
void to_json(nlohmann::json& j, const Band& b) {
  j = {{"lo", b.lo},
       {"hi", b.hi},
       {"samples", b.samples},
       {"max_abs", b.max_abs},
       {"max_ulp", b.max_ulp},
       {"max_budget_ratio", b.max_budget_ratio},
       {"budget_at_max_abs", b.budget_at_max_abs},
       {"p99_abs", b.p99_abs},
       {"p99_ulp", b.p99_ulp},
       {"undecidable", b.undecidable},
       {"verdict", b.verdict}};
}
void from_json(const nlohmann::json& j, Band& b) {
  const nlohmann::json none = nlohmann::json::object();
  b = {};
  j.at("lo").get_to(b.lo);
  j.at("hi").get_to(b.hi);
  b.samples = j.value("samples", std::size_t{0});
  b.max_abs = j.value("max_abs", none).get<Worst>();
  b.max_ulp = j.value("max_ulp", none).get<Worst>();
  b.max_budget_ratio = j.value("max_budget_ratio", none).get<Worst>();
  b.budget_at_max_abs = number(j, "budget_at_max_abs");
  b.p99_abs = number(j, "p99_abs");
  b.p99_ulp = number(j, "p99_ulp");
  b.undecidable = j.value("undecidable", std::size_t{0});
  j.at("verdict").get_to(b.verdict);
}

nlohmann::json to_json(const std::vector<InstanceResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const InstanceResult& r : results) {
    const Contract& c = r.instance.contract();
    const std::vector<Band> bands(r.bands.begin(), r.bands.end());
    out.push_back({{"instance", r.instance.name()},
                   {"runs",
                    {{"rows", r.runs.rows},
                     {"differing_elements", r.runs.differing},
                     {"first_position", r.runs.first_position}}},
                   {"variant", r.instance.variant->name()},
                   {"family", to_string(r.instance.variant->family())},
                   {"layout", to_string(r.instance.layout)},
                   {"dtype", to_string(r.instance.dtype)},
                   {"contract",
                    {{"c0_effective", effective_c0(c, r.instance.dtype)},
                     {"c1", c.c1},
                     {"c1_pair", c.c1_pair},
                     {"u_angle", unit_roundoff(c.angle_type)},
                     {"max_position", c.max_position},
                     {"declared", c}}},
                   {"bands", bands},
                   {"within_contract", r.within_contract()}});
    if (!r.fault.empty()) out.back()["fault"] = r.fault;
  }
  return out;
}

namespace {
// The method and the parameters it reads, and the partial rotary factor when one was given.
nlohmann::json form_json(const Options& options) {
  nlohmann::json j = nlohmann::json::object();
  const RopeForm& f = options.form;
  if (!f.mrope_section.empty()) {
    j["mrope_section"] = f.mrope_section;
    j["mrope_layout"] = to_string(f.mrope_layout);
  }
  if (f.vision != VisionRope::None) j["vision"] = to_string(f.vision);
  if (options.rotary_offset != 0) j["rotary_offset"] = options.rotary_offset;
  return j;
}
nlohmann::json scaling_json(const Options& options) {
  nlohmann::json j = options.scaling;
  if (options.partial_rotary_factor != 0) j["partial_rotary_factor"] = options.partial_rotary_factor;
  return j;
}
}  // namespace

nlohmann::json to_document(const std::vector<InstanceResult>& results, const Options& options) {
  nlohmann::json doc = {
      {"schema", "pe-suite/census/1"},
      {"effort", options.effort == Effort::Full ? "full" : "quick"},
      {"variant", options.glob},
      {"shard", std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count)},
      {"rope_scaling", scaling_json(options)},
      {"rope_form", form_json(options)},
      {"instances", to_json(results)}};
  if (!options.config.empty()) doc["config"] = options.config;
  return doc;
}

nlohmann::json rope_scaling_of(const std::vector<nlohmann::json>& documents) {
  const nlohmann::json none = {{"type", "none"}};
  nlohmann::json common;
  for (const auto& d : documents) {
    const nlohmann::json s = d.is_object() ? d.value("rope_scaling", none) : none;
    if (common.is_null()) common = s;
    if (s != common) {
      throw std::runtime_error("census files measured under different RoPE scalings: " + common.dump() +
                               " and " + s.dump());
    }
  }
  return common.is_null() ? none : common;
}

namespace {

// Shards of an N-way census (N > 1, the same selection): each index once, none missing.
void check_shards(const std::vector<nlohmann::json>& documents) {
  std::map<std::pair<std::string, std::size_t>, std::map<std::size_t, int>>
      seen;  // (variant, N) -> index count
  for (const auto& d : documents) {
    const std::string shard = d.value("shard", "0/1");
    const auto parsed = parse_shard(shard);
    if (!parsed) throw std::runtime_error("a census file's shard is not I/N with I < N: '" + shard + "'");
    const auto [index, count] = *parsed;
    if (count == 1) continue;
    if (++seen[{d.value("variant", ""), count}][index] > 1)
      throw std::runtime_error(
          fmt::format("shard {}/{} of --variant '{}' is given twice", index, count, d.value("variant", "")));
  }
  for (const auto& [key, counts] : seen) {
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < key.second && missing.size() < 10; ++i)  // the first ten named, then a count
      if (!counts.count(i)) missing.push_back(fmt::format("{}/{}", i, key.second));
    if (missing.empty()) continue;
    const std::size_t total = key.second - counts.size();
    const bool one = total == 1;
    throw std::runtime_error(fmt::format(
        "shard{} {}{} of --variant '{}' {} missing: no file given holds {} (resubmit {})", one ? "" : "s",
        fmt::join(missing, ", "),
        total > missing.size() ? fmt::format(" and {} more", total - missing.size()) : "", key.first,
        one ? "is" : "are", one ? "it" : "them", one ? "that array task" : "those array tasks"));
  }
}

}  // namespace

nlohmann::json merge_instances(const std::vector<nlohmann::json>& documents) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& d : documents) {
    if (!d.is_object() || d.value("schema", "") != "pe-suite/census/1" || !d.contains("instances"))
      throw std::runtime_error("not a pe-suite census file (schema pe-suite/census/1)");
  }
  rope_scaling_of(documents);  // shards of one census share its scaling
  for (const auto& d : documents) {
    if (d.value("config", "") != documents.front().value("config", ""))
      throw std::runtime_error("census files of different model configs ('" +
                               documents.front().value("config", "") + "' and '" + d.value("config", "") +
                               "'): a sweep's report separates them");
  }
  check_shards(documents);
  for (const auto& d : documents) {
    for (const auto& inst : d["instances"]) {
      const std::string name = inst.at("instance").get<std::string>();
      if (!seen.insert(name).second)
        throw std::runtime_error("instance " + name + " appears in two census files");
      out.push_back(inst);
    }
  }
  return out;
}

}  // namespace pe::census

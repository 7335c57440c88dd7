// --hf-config through the command line's flags: a flag given wins over the config's value and is
// reported as an override (the resolver itself is tested in check/tests/hf_config_test.cc).
#include "hf_config_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "form_options.h"
#include "names.h"
#include "scaling_options.h"
#include "support/source_dir.h"

namespace pe::cli {
namespace {

using nlohmann::json;

// The command line wins: --base overrides rope_theta, --factor one key, --scaling the whole block.
struct Command {
  CLI::App app;
  double base = 10000;
  std::string layout;
  std::int64_t rotary_dim = 0;
  ScalingFlags scaling;
  FormFlags form;
  HfConfigFlags hf;
  check::RopeSpec spec;  // the flags given, then the config around them
  check::HfResolution run(std::vector<std::string> args) {
    app.add_option("--base", base);
    app.add_option("--layout", layout);
    app.add_option("--rotary-dim", rotary_dim);
    add_scaling_options(app, scaling);
    add_form_options(app, form);
    add_hf_config_options(app, hf);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    read_scaling_flags(app, scaling);
    read_form_flags(app, form);
    const check::Names names = flag_names({{"rotary_dim", "--rotary-dim"}});
    if (app.count("--base") > 0) spec.base = base;
    if (app.count("--layout") > 0) spec.layout = check::parse_layout(layout, Family::Rope, names);
    if (app.count("--rotary-dim") > 0) spec.rotary_dim = rotary_dim;
    spec.scaling = scaling.spec;
    spec.form = form.spec;
    return *check::apply_hf_config(hf_source(hf, app), spec, check::HfUse{}, names);
  }
};

std::string config_path(const std::string& name) {
  return pe::testing::source_dir() + "/examples/hf_configs/" + name + ".json";
}

TEST(HfConfigOptions, FlagsGivenOverrideTheConfig) {
  Command c;
  const check::HfResolution r =
      c.run({"--hf-config", config_path("Llama-3.1-8B"), "--base", "10000", "--factor", "4"});
  EXPECT_EQ(c.spec.base, 10000.0);
  EXPECT_EQ(c.spec.scaling.method, RopeScalingType::Llama3);
  EXPECT_EQ(c.spec.scaling.factor, 4.0);
  EXPECT_EQ(c.spec.scaling.high_freq_factor, 4.0);  // the config's
  EXPECT_EQ(c.spec.scaling.original_max_position, 8192);
  const std::string o = json(r.overrides).dump();
  EXPECT_NE(o.find("--base 10000 overrides rope_theta 500000"), std::string::npos) << o;
  EXPECT_NE(o.find("--factor 4 overrides rope_scaling.factor 8"), std::string::npos) << o;
}

TEST(HfConfigOptions, ScalingDropsTheWholeBlock) {
  Command c;
  const check::HfResolution r =
      c.run({"--hf-config", config_path("Llama-3.1-8B"), "--scaling", "linear", "--factor", "2"});
  EXPECT_EQ(c.spec.scaling.method, RopeScalingType::Linear);
  EXPECT_FALSE(c.spec.scaling.low_freq_factor.has_value());
  EXPECT_FALSE(c.spec.scaling.original_max_position.has_value());
  EXPECT_EQ(c.spec.base, 500000.0);
  EXPECT_NE(json(r.overrides).dump().find("whole scaling block dropped"), std::string::npos);
}

TEST(HfConfigOptions, PartialRotaryAndLayout) {
  Command phi2;
  phi2.run({"--hf-config", config_path("phi-2")});
  EXPECT_EQ(phi2.spec.rotary_dim, 32);  // int(80 * 0.4)
  Command ds;
  ds.run({"--hf-config", config_path("DeepSeek-V2-Lite"), "--layout", "halfsplit"});
  EXPECT_EQ(ds.spec.layout, Layout::HalfSplit);
  EXPECT_EQ(ds.spec.rotary_dim, 64);
  EXPECT_EQ(ds.spec.scaling.mscale, 0.707);
  Command phi3;
  phi3.run({"--hf-config", config_path("Phi-3-mini-128k-instruct")});
  EXPECT_EQ(phi3.spec.scaling.short_factor->size(), 48u);
  EXPECT_EQ(phi3.spec.scaling.factor, 32.0);
}

}  // namespace
}  // namespace pe::cli

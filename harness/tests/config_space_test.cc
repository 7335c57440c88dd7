// The model-config space's file (harness/data/config_space.json): compiled in byte for byte, read into its
// typed form and written back to the same JSON (every field pinned), malformed specs refused naming what is
// wrong, and value_of's rule (the one pe_suite.config_space.value_of follows).
#include "pe/harness/config_space.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/source_dir.h"

namespace pe::harness {
namespace {

TEST(ConfigSpace, IsTheFileByteForByte) {
  std::ifstream in(pe::testing::source_dir() + "/harness/data/config_space.json", std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  ASSERT_FALSE(file.str().empty());
  EXPECT_EQ(config_space_text(), file.str());
}

TEST(ConfigSpace, RoundTripsEveryField) {
  nlohmann::json file = nlohmann::json::parse(config_space_text());
  file.erase("about");
  EXPECT_EQ(nlohmann::json(config_space()), file);
}

TEST(ConfigSpace, NamesEveryRopeTypeAndItsParameters) {
  const ConfigSpace& s = config_space();
  EXPECT_EQ(s.rope_types,
            (std::vector<std::string>{"default", "linear", "dynamic", "yarn", "longrope", "llama3"}));
  EXPECT_NO_THROW(s.param("yarn", "beta_fast"));
  EXPECT_THROW(s.param("yarn", "beta_medium"), std::out_of_range);
  EXPECT_THROW(s.param("ntk", "factor"), std::out_of_range);
}

TEST(ConfigSpace, RefusesMalformedSpecsNamingThem) {
  const auto refused = [](const char* text, const char* words) {
    try {
      (void)nlohmann::json::parse(text).get<ParamSpec>();
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(R"({"uniform": [1, 2], "choice": [1]})", "one of choice, uniform, loguniform");
  refused(R"({"share": 0.5})", "one of choice, uniform, loguniform");
  refused(R"({"uniform": [2, 1]})", "uniform: expected [lo, hi]");
  refused(R"({"loguniform": [0, 1]})", "loguniform: expected [lo, hi]");
  refused(R"({"choice": [1], "share": 0})", "share outside (0, 1]");
  nlohmann::json space = nlohmann::json::parse(config_space_text());
  space["methods"].erase("llama3");
  EXPECT_THROW(space.get<ConfigSpace>(), std::invalid_argument);
  space = nlohmann::json::parse(config_space_text());
  space.erase("tokens");
  try {
    (void)space.get<ConfigSpace>();
    ADD_FAILURE() << "a space without tokens was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "config space: the space lacks 'tokens'");
  }
}

// value_of: a choice's index from `pick` (the last one for pick just below 1), a range's point from `u`, then
// the rounding (to a multiple, to significant digits).
TEST(ConfigSpace, ValueOfPicksAndRounds) {
  const auto spec = [](const char* text) { return nlohmann::json::parse(text).get<ParamSpec>(); };
  EXPECT_EQ(value_of(spec(R"({"choice": [2, 4, 8]})"), 0.0, 0.9), 2);
  EXPECT_EQ(value_of(spec(R"({"choice": [2, 4, 8]})"), 0.5, 0.9), 4);
  EXPECT_EQ(value_of(spec(R"({"choice": [2, 4, 8]})"), 1 - 0x1p-53, 0.9), 8);
  EXPECT_EQ(value_of(spec(R"({"uniform": [1, 16], "digits": 3})"), 0.9, 1.0 / 3), 6.0);
  EXPECT_EQ(value_of(spec(R"({"uniform": [1, 2], "digits": 3})"), 0.9, 0.123456), 1.12);
  EXPECT_EQ(value_of(spec(R"({"loguniform": [1, 64], "multiple_of": 0.0625})"), 0.9, 0.5), 8.0);
  EXPECT_EQ(value_of(spec(R"({"loguniform": [1.5, 64], "multiple_of": 0.0625})"), 0.9, 0.0), 1.5);
}

}  // namespace
}  // namespace pe::harness

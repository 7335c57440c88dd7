"""The model-config space: the package reads the same file the C++ properties compile in
(harness/data/config_space.json, pinned by harness/tests/config_space_test.cc), value_of follows the C++ rule on
the same inputs, and every drawn config stays within the space's ranges and rules."""
import json
import pathlib
import random

import pytest

from pe_suite import config_space as space

SOURCE = pathlib.Path(__file__).resolve().parents[2] / "harness" / "data" / "config_space.json"


def test_the_package_reads_the_shared_file_byte_for_byte():
    packaged = pathlib.Path(space.__file__).with_name("config_space.json")
    assert packaged.read_bytes() == SOURCE.read_bytes()
    assert space.SPACE == json.loads(SOURCE.read_text())


@pytest.mark.parametrize("spec,pick,u,value", [  # harness/tests/config_space_test.cc's ValueOfPicksAndRounds
    ({"choice": [2, 4, 8]}, 0.0, 0.9, 2), ({"choice": [2, 4, 8]}, 0.5, 0.9, 4),
    ({"choice": [2, 4, 8]}, 1 - 2 ** -53, 0.9, 8), ({"uniform": [1, 16], "digits": 3}, 0.9, 1 / 3, 6.0),
    ({"uniform": [1, 2], "digits": 3}, 0.9, 0.123456, 1.12),
    ({"loguniform": [1, 64], "multiple_of": 0.0625}, 0.9, 0.5, 8.0),
    ({"loguniform": [1.5, 64], "multiple_of": 0.0625}, 0.9, 0.0, 1.5)])
def test_value_of_follows_the_cpp_rule(spec, pick, u, value):
    assert space.value_of(spec, pick, u) == value


def _within(spec, v):
    if "choice" in spec:
        return v in spec["choice"]
    lo, hi = spec.get("uniform") or spec["loguniform"]
    step = spec.get("multiple_of", 0)
    slack = max(step, abs(hi) * 10 ** -(spec.get("digits", 17) - 1))  # rounding may cross an end by one step
    return lo - slack <= v <= hi + slack


def _shipped_as(shipped, config):
    scaling = {k: v for k, v in (shipped.get("rope_scaling") or {}).items() if k != "mrope_section"}
    return shipped["rope_theta"] == config["rope_theta"] and (scaling or None) == config.get("rope_scaling") and \
        all(config.get(k) == shipped[k] for k in ("max_position_embeddings", "hidden_size") if k in shipped)


def test_every_drawn_config_stays_within_the_space():
    kinds = set()
    for seed in range(3000):
        config, form = space.draw_config(random.Random(seed), space.ROPE_TYPES, space.FORMS)
        s = config.get("rope_scaling") or {}
        kind = s.get("rope_type", s.get("type", "default"))
        kinds.add((kind, form))
        if form == "text" and any(_shipped_as(c, config) for _, _, c in space.SHIPPED):
            continue  # a shipped config's own values (its head_dim, theta and scaling), not the ranges'
        assert config["head_dim"] in space.HEAD_DIMS, config
        assert _within(space.SPACE["rope_theta"], config["rope_theta"]) or \
            _within(space.SPACE["rope_theta"]["otherwise"], config["rope_theta"]), config
        if form == "partial":
            assert config["partial_rotary_factor"] in space.SPACE["partial_rotary_factor"]["choice"], config
        m = space.SPACE["methods"].get(kind, {})
        for name in ("factor", "beta_fast", "beta_slow", "attention_factor", "low_freq_factor",
                     "original_max_position_embeddings"):
            if name in s and name in m:
                assert _within(m[name], s[name]), (name, config)
        if kind == "yarn":
            assert config["max_position_embeddings"] == int(s["original_max_position_embeddings"] * s["factor"])
        if kind == "llama3":
            assert s["high_freq_factor"] / s["low_freq_factor"] in m["high_over_low"]["choice"], config
        if kind == "longrope":
            pairs = space.rotary_dim_of(config) // 2
            assert len(s["short_factor"]) == len(s["long_factor"]) == pairs, config
            assert all(_within(m["short_factor"], v) for v in s["short_factor"]), config
            assert all(_within(m["long_factor"], v) for v in s["long_factor"]), config
            ratio = config["max_position_embeddings"] / config["original_max_position_embeddings"]
            assert ratio in m["max_over_original"]["choice"], config
        if "mrope_section" in s:
            assert min(s["mrope_section"]) >= 1 and sum(s["mrope_section"]) == space.rotary_dim_of(config) // 2
    assert {k for k, _ in kinds} == set(space.ROPE_TYPES) and {f for _, f in kinds} == set(space.FORMS)

"""pe_suite.strategies with Hypothesis: the README-style composition passes on HF's RoPE, finds a planted
mistake (shrunk by Hypothesis), and the strategies stay in the config space."""
import pytest
from hypothesis import HealthCheck, given, settings

import pe_suite
from pe_suite import config_space as space
from pe_suite import strategies as pst
from hf_rope_config import hf_rope

quick = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


@quick
@given(pst.cases(rope_types=("yarn", "llama3", "longrope"), forms=("text", "partial")))
def test_hf_rope_passes_drawn_cases(case):
    y = hf_rope(case["x"], case["positions"], case["config"])
    pe_suite.assert_rope_close(case["x"], y, case["positions"], hf_config=case["config"], layout=case["layout"])


def test_a_planted_mistake_is_found():
    @quick
    @given(pst.cases(rope_types=("linear",)))
    def prop(case):
        y = hf_rope(case["x"], case["positions"], case["config"], plant="linear_factor_ignored")
        pe_suite.assert_rope_close(case["x"], y, case["positions"], hf_config=case["config"])

    # Found, and shrunk by Hypothesis to a few rows at head_dim 2: too few to name a cause from (verify_rope
    # reads its diagnosis from a 48 x 4 probe instead).
    with pytest.raises(AssertionError, match="verdict: FAIL"):
        prop()


@quick
@given(pst.configs(forms=("text", "partial", "mrope")), pst.positions(scenarios=("packed",)))
def test_configs_are_valid_and_packed_positions_restart(config, positions):
    assert space.valid(config)
    assert positions[0] == 0 and all(b == a + 1 or b == 0 for a, b in zip(positions, positions[1:]))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="rope_types: expected a non-empty list"):
        pst.configs(rope_types=("ntk",))
    with pytest.raises(ValueError, match="scenarios: expected a non-empty list"):
        pst.positions(scenarios=())
    with pytest.raises(ValueError, match="dtypes: expected a non-empty list"):
        pst.cases(dtypes=("int8",))


def test_numpy_cases():
    @quick
    @given(pst.cases(dtypes=("float32", "float16"), array="numpy"))
    def prop(case):
        assert case["x"].dtype.name == case["dtype"] and case["positions"].dtype.name == "int64"

    prop()

"""Hypothesis strategies over verify_rope's config space (pe_suite.config_space), for tests that compose
their own properties with @given (Debian's python3-hypothesis):

    from hypothesis import given
    from pe_suite import strategies as pst

    @given(pst.cases(rope_types=("yarn", "llama3")))
    def test_my_rope(case):
        y = my_rope(case["x"], case["positions"], case["config"])
        pe_suite.assert_rope_close(case["x"], y, case["positions"], hf_config=case["config"], layout=case["layout"])

Each strategy draws through a Hypothesis-controlled random.Random, so Hypothesis replays and shrinks the
draws (its database included); verify_rope's own shrinking knows the config space and goes further."""
from hypothesis import strategies as st

from . import config_space as space


def _no_xpos(rope_types):
    """ValueError for "xpos": its centre follows a call's positions and its keys are check_rope's keywords, not
    hf_config's, so the pattern above does not hold for it (verify_rope draws it)."""
    if "xpos" in rope_types:
        raise ValueError("rope_types: 'xpos' is drawn by verify_rope only (its centre follows the call's positions "
                         "and check_rope takes its keys as keywords, not in hf_config)")


def configs(rope_types=space.ROPE_TYPES, forms=("text",)):
    """HF config dicts (rope_theta, head_dim, partial_rotary_factor, rope_scaling...)."""
    space.check_choices("rope_types", rope_types, space.KNOWN_ROPE_TYPES)
    _no_xpos(rope_types)
    space.check_choices("forms", forms, space.FORMS)
    return st.randoms(use_true_random=False).map(lambda r: space.draw_config(r, rope_types, forms)[0])


def positions(scenarios=space.SCENARIOS, tokens=st.integers(*space.SPACE["tokens"]["other"]), max_position=1 << 21):
    """Token positions of one call (lists of int) in the scenarios given."""
    space.check_choices("scenarios", scenarios, space.SCENARIOS)
    return st.tuples(st.randoms(use_true_random=False), st.sampled_from(scenarios), tokens).map(
        lambda t: space.draw_positions(t[0], t[1], t[2], max_position))


def cases(rope_types=space.ROPE_TYPES, forms=("text",), dtypes=("float32", "bfloat16"), layout="halfsplit",
          scenarios=space.SCENARIOS, max_position=1 << 21, array="torch", semantics="hf"):
    """verify_rope's cases as the kernel takes them: {"x", "positions" (tensors or arrays), "config", "layout",
    "dtype", "scenario"}; semantics as verify_rope's (the engine whose reading of the config is stated)."""
    from .verify import _check_rope_arguments, _rope_inputs, draw_case  # the same draw as verify_rope's
    _check_rope_arguments(dtypes, rope_types, forms, scenarios, layout, array, semantics)
    _no_xpos(rope_types)

    def build(r):
        case = draw_case(r, rope_types=rope_types, forms=forms, dtypes=dtypes, layout=layout, scenarios=scenarios,
                         max_position=max_position, semantics=semantics)
        x, p = _rope_inputs(case, array)
        return dict(case, x=x, positions=p)

    return st.randoms(use_true_random=False).map(build)


__all__ = ["configs", "positions", "cases"]

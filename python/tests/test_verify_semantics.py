"""verify_rope over the rope types engines compute differently under one name (issue 50, item 2): Gemma 4's
"proportional" drawn by name, and semantics="vllm"/"sglang" (dynamic NTK as one table at factor·L or Hunyuan's
alpha, YaRN's attention_factor times its mscale) stated in each drawn config. HF's kernel (hf_rope_config.py) and
vLLM's (vllm_rope_config.py) are written in the tests from the engines' published code; each passes under its own
semantics and fails under the other's, the diagnosis naming which reading it computed."""
import functools
import random

import pytest

import pe_suite
from pe_suite import config_space as space
from hf_rope_config import hf_rope
from vllm_rope_config import vllm_rope


def failure_text(fn, **kwargs):
    with pytest.raises(AssertionError) as e:
        pe_suite.verify_rope(fn, failure_file=None, **kwargs)
    return str(e.value)


def test_proportional_is_drawn_by_name_and_hf_rope_passes_it_in_float32_and_bfloat16():
    summary = pe_suite.verify_rope(hf_rope, rope_types=("proportional",), examples=120, failure_file=None)
    assert {tag.split("/")[0] for tag in summary["cases"]} == {"proportional"}
    assert {tag.split("/")[1] for tag in summary["cases"]} == {"float32", "bfloat16"}
    assert "proportional" not in space.ROPE_TYPES  # opt-in: the default stays HF's classic six


def test_proportional_with_its_exponent_over_the_turning_pairs_is_caught_and_named():
    text = failure_text(functools.partial(hf_rope, plant="proportional_as_partial"), rope_types=("proportional",))
    assert "proportional's exponent over the turning pairs' dim" in text, text
    assert "where HF's is over head_dim" in text, text


@pytest.mark.parametrize("semantics", ["vllm", "sglang"])
def test_vllm_rope_passes_under_its_own_semantics(semantics):
    summary = pe_suite.verify_rope(vllm_rope, rope_types=("default", "linear", "dynamic", "yarn"), examples=150,
                                   semantics=semantics, failure_file=None)
    assert {tag.split("/")[0] for tag in summary["cases"]} == {"default", "linear", "dynamic", "yarn"}


def test_hf_rope_under_vllm_semantics_fails_named():
    text = failure_text(hf_rope, rope_types=("dynamic",), semantics="vllm")
    assert "scaling ignored: plain RoPE (given: dynamic alpha" in text or "HF's live length" in text, text


def test_vllm_dynamic_under_hf_semantics_fails_named_as_the_static_table():
    text = failure_text(vllm_rope, rope_types=("dynamic",))
    assert "vLLM's static base (n = factor·L" in text and "where HF's live length was expected" in text, text


def test_vllm_yarn_under_hf_semantics_fails_named_as_the_multiplied_attention_factor():
    text = failure_text(vllm_rope, rope_types=("yarn",), examples=300)
    assert "yarn attention_factor multiplying its mscale (vLLM's and SGLang's" in text, text


def test_a_vllm_kernel_reading_the_live_length_is_caught_under_vllm_semantics():
    text = failure_text(functools.partial(vllm_rope, plant="live_length"), rope_types=("dynamic",),
                        semantics="vllm")
    assert "dynamic NTK with HF's live length where vLLM's static base was expected" in text or \
        "dynamic NTK computed with HF's live length" in text, text


def test_semantics_are_stated_in_the_drawn_config_and_stored_cases_replay_only_under_theirs():
    rng = random.Random(5)
    seen = set()
    for _ in range(200):
        config, _ = space.draw_config(rng, ("dynamic", "yarn"), ("text",))
        config = space.apply_semantics(rng, config, "vllm")
        s = config["rope_scaling"]
        if space.rope_type_of(config) == "dynamic":
            seen.add("alpha" if "alpha" in s else s["dynamic_semantics"])
        elif "attention_factor" in s:
            seen.add(s["yarn_attention"])
        assert space.semantics_fit(config, "vllm") and space.semantics_fit(config, "sglang")
        assert not space.semantics_fit(config, "hf") or (space.rope_type_of(config) == "yarn"
                                                         and "attention_factor" not in s)
    assert seen == {"alpha", "static", "multiply"}


def test_bad_semantics_is_named():
    with pytest.raises(ValueError, match="semantics: expected one of hf, vllm, sglang, tgi; got 'trt'"):
        pe_suite.verify_rope(hf_rope, semantics="trt", failure_file=None)

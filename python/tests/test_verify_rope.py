"""pe_suite.verify_rope on HF's RoPE in PyTorch (hf_rope_config.py, written from transformers' own code):
correct for every rope_type, layout, form and dtype engines ship, so nothing is flagged; each planted mistake
caught within the default example count at 9 of 10 seeds or more, shrunk to at most 4 tokens, 1 head and the
smallest head_dim that still fails, and named by the diagnosis; failures replayed first from the failure
file; bad arguments named."""
import functools
import json
import random

import numpy as np
import pytest
import torch

import pe_suite
from pe_suite import verify as v
from hf_rope_config import hf_rope


def test_hf_rope_passes_500_drawn_cases_of_every_rope_type_form_and_dtype():
    summary = pe_suite.verify_rope(hf_rope, examples=500, forms=("text", "partial", "mrope"),
                                   dtypes=("float32", "bfloat16"), failure_file=None)
    kinds = {tag.split("/")[0] for tag in summary["cases"]}
    assert kinds == set(pe_suite.config_space.ROPE_TYPES), summary
    assert {tag.split("/")[1] for tag in summary["cases"]} == {"float32", "bfloat16"}


def test_interleaved_layout_float16_and_numpy_arrays_pass():
    pe_suite.verify_rope(functools.partial(hf_rope, layout="interleaved"), layout="interleaved", examples=150,
                         forms=("text", "partial"), dtypes=("float32", "bfloat16", "float16"), failure_file=None)

    def numpy_rope(x, positions, config):  # the caller's wrapper: arrays in, arrays out
        return hf_rope(torch.from_numpy(x), torch.from_numpy(positions), config).numpy()

    pe_suite.verify_rope(numpy_rope, array="numpy", dtypes=("float32", "float16"), examples=100, failure_file=None)


# (mistake, the forms and dtypes the kernel is declared for, words the diagnosis or the property must say). With
# int32 positions (its own test, below) the twelve the issue lists: a parameter misread in each scaling method,
# the base dropped by a converter, the decode offset ignored, a pass-through channel touched, a packed batch's
# restart ignored, M-RoPE's sections in the wrong order, a 16-bit cos/sin cache beyond its class.
NAMED = [
    ("linear_factor_ignored", ("text",), ("float32", "bfloat16"), "scaling ignored"),
    ("dynamic_never_grows", ("text",), ("float32", "bfloat16"), "scaling ignored"),
    ("yarn_attention_factor_dropped", ("text",), ("float32", "bfloat16"), "attention factor 1"),
    ("longrope_lists_swapped", ("text",), ("float32", "bfloat16"), "long_factor"),
    ("llama3_freq_factors_swapped", ("text",), ("float32", "bfloat16"), "a step at L/high_freq_factor"),
    ("llama3_original_8192", ("text",), ("float32", "bfloat16"), "original_max_position 8192 (given 4096)"),
    ("rope_theta_ignored", ("text",), ("float32", "bfloat16"), "base 10000 (given"),
    ("offset_ignored", ("text",), ("float32", "bfloat16"), "an offset dropped"),
    ("packed_restart_ignored", ("text",), ("float32", "bfloat16"), "where the given ones restart"),
    ("pass_through_touched", ("partial",), ("float32", "bfloat16"), "changes a pass-through channel"),
    ("mrope_sections_reversed", ("mrope",), ("float32", "bfloat16"), "the given sections in reverse order"),
    ("bf16_cache_for_f32", ("text",), ("float32",), "a 16-bit cos/sin cache"),
]


def _rope_type(plant):
    return {"linear": "linear", "dynamic": "dynamic", "yarn": "yarn", "longrope": "longrope",
            "llama3": "llama3"}.get(plant.split("_")[0])


def _run(plant, forms, dtypes, seed):
    kind = _rope_type(plant)
    try:
        pe_suite.verify_rope(functools.partial(hf_rope, plant=plant), seed=seed, forms=forms, dtypes=dtypes,
                             rope_types=(kind,) if kind else pe_suite.config_space.ROPE_TYPES, failure_file=None)
    except pe_suite.verify.VerifyError as e:
        return e
    return None


def _smallest_head_dim(plant, e):
    """No smaller head_dim of the minimal case still fails its property."""
    caller = v._Caller(functools.partial(hf_rope, plant=plant), "torch")
    d = e.case["config"]["head_dim"]
    for smaller in range(2, d, 2):
        c = v._head_dim(e.case, smaller)
        if c is not None:
            found = v._failure(caller, c, only=e.property)
            assert not (found and found[0] == e.property), f"head_dim {smaller} fails too:\n{e}"


def _shrunk(plant, e):
    x = np.asarray(e.case["x"])
    assert x.shape[0] <= 4 and x.shape[1] == 1, str(e)
    _smallest_head_dim(plant, e)


@pytest.mark.parametrize("plant,forms,dtypes,words", NAMED, ids=[n[0] for n in NAMED])
def test_planted_mistake_is_caught_shrunk_and_named_at_nine_of_ten_seeds(plant, forms, dtypes, words):
    named = 0
    for seed in range(10):
        e = _run(plant, forms, dtypes, seed)
        if e is None:
            continue
        _shrunk(plant, e)
        named += words in str(e)
    assert named >= 9, f"{plant}: caught and named at {named} of 10 seeds"


def f64_rope(x, positions, config, int32_positions=False):
    """HF's default RoPE with its angles, cos and sin in double (a kernel declared to rope.scalar_f64's
    contract); with int32_positions, the positions cast to int32 first, as a kernel storing them so does."""
    d, base = config["head_dim"], config["rope_theta"]
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    p = positions.to(torch.int32).to(torch.float64) if int32_positions else positions.to(torch.float64)
    freqs = p[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), -1)
    xd = x.double()
    turned = torch.cat((-xd[..., d // 2:], xd[..., :d // 2]), -1)
    return (xd * emb.cos()[:, None] + turned * emb.sin()[:, None]).to(x.dtype)


INT32 = dict(rope_types=("default",), dtypes=("float32",), scenarios=("decode", "chunked"), max_position=1 << 33,
             contract="rope.scalar_f64", failure_file=None)


def test_int32_positions_are_caught_beyond_2_31_under_a_double_contract_and_named_at_nine_of_ten_seeds():
    pe_suite.verify_rope(f64_rope, **INT32)  # the same kernel with int64 positions: no false alarm
    named = 0
    for seed in range(10):
        try:
            pe_suite.verify_rope(functools.partial(f64_rope, int32_positions=True), seed=seed, **INT32)
        except pe_suite.verify.VerifyError as e:
            x = np.asarray(e.case["x"])
            assert x.shape[0] <= 4 and x.shape[1] == 1 and max(e.case["positions"]) >= 1 << 31, str(e)
            # Beyond 2^23 a float32 angle's tolerance spans every rotation: no convention's fit is claimed from
            # it (what is read back from the data, positions or pairing, may still be), never a vacuous fit.
            assert "max residual" not in str(e).split("diagnosis")[1], str(e)
            named += "positions truncated to 32 bits" in str(e).split("diagnosis")[1]
    assert named >= 9, f"int32 positions caught and named at {named} of 10 seeds"


def _replay_snippet(e, fn):
    snippet = str(e).split("    import torch\n", 1)[1].split("  diagnosis")[0]
    code = "import torch\n" + "\n".join(line[4:] for line in snippet.splitlines())
    scope = {"fn": fn}
    exec(code.replace("print(", "report = ("), scope)  # noqa: S102 -- the report's own snippet
    return scope["report"]


@pytest.mark.parametrize("plant,rope_types", [("yarn_attention_factor_dropped", ("yarn",)),
                                              ("offset_ignored", ("default",))])
def test_the_minimal_case_snippet_reproduces_the_failure(plant, rope_types):
    fn = functools.partial(hf_rope, plant=plant)
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_rope(fn, rope_types=rope_types, failure_file=None)
    assert not _replay_snippet(info.value, fn).passed  # a default config's None is Python in the snippet too


def test_an_in_place_kernel_passes_and_one_that_changes_x_first_fails():
    def in_place(x, positions, config):  # vLLM's style: the rotation written over x
        return x.copy_(hf_rope(x, positions, config))

    pe_suite.verify_rope(in_place, examples=40, failure_file=None)

    def scales_x_first(x, positions, config):
        return hf_rope(x.mul_(2), positions, config)

    with pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_rope(scales_x_first, examples=40, failure_file=None)


def test_a_cache_that_the_decode_steps_outgrow_is_caught():
    caches = {}

    def cached(x, positions, config):  # cos/sin sized by the first call of a config, never grown
        key = json.dumps(config, sort_keys=True)
        if key not in caches:
            caches[key] = int(positions.max()) + 1
        return hf_rope(x, positions.clamp(max=caches[key] - 1), config)

    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_rope(cached, rope_types=("default",), scenarios=("chunked",), failure_file=None)
    # The decode steps are the first calls to outgrow it; the whole call after them does too.
    assert info.value.property in (v.PREFILL_DECODE, v.AGREES), str(info.value)
    assert "positions" in str(info.value).split("diagnosis")[1], str(info.value)


def test_a_kernel_returning_numpy_for_tensors_is_named():
    with pytest.raises(pe_suite.verify.VerifyError, match="fn returned numpy.ndarray; want a torch tensor like x"):
        pe_suite.verify_rope(lambda x, p, c: hf_rope(x, p, c).numpy(), dtypes=("float32",), failure_file=None)


def test_shrinking_stays_in_the_declared_dtypes():
    e = _run("offset_ignored", ("text",), ("bfloat16",), 0)
    assert e is not None and e.case["dtype"] == "bfloat16", str(e)


@pytest.mark.parametrize("reuse", [False, True])
def test_a_kernel_whose_bits_change_between_calls_is_caught(reuse):
    buffers = {}

    def jittery(x, positions, config):  # one element moved by one unit in the last place, at random
        y = hf_rope(x, positions, config)
        if reuse:  # written into a buffer the kernel keeps and returns again
            y = buffers.setdefault(tuple(y.shape), torch.empty_like(y)).copy_(y)
        flat = y.view(-1)
        k = random.randrange(flat.numel())
        flat[k] = torch.nextafter(flat[k:k + 1], torch.tensor([float("inf")], dtype=y.dtype))[0]
        return y

    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_rope(jittery, dtypes=("float32",), failure_file=None)
    assert info.value.property == v.DETERMINISTIC


_mistake = {"plant": "linear_factor_ignored"}


def switchable_rope(x, positions, config):  # a kernel whose mistake a test fixes between runs
    return hf_rope(x, positions, config, plant=_mistake["plant"])


def test_a_failure_is_kept_and_replayed_first_until_fixed(tmp_path):
    store = tmp_path / "failures.json"
    _mistake["plant"] = "linear_factor_ignored"
    with pytest.raises(AssertionError):
        pe_suite.verify_rope(switchable_rope, rope_types=("linear",), failure_file=store)
    kept = json.loads(store.read_text())
    assert list(kept) == ["test_verify_rope.switchable_rope/halfsplit/torch"] and len(kept[list(kept)[0]]) == 1
    # Found again before any case is drawn: one drawn case of another seed would not find it.
    with pytest.raises(AssertionError, match="replayed from"):
        pe_suite.verify_rope(switchable_rope, rope_types=("linear",), examples=1, seed=99, failure_file=store)
    _mistake["plant"] = None  # fixed: the replayed case passes and is forgotten
    pe_suite.verify_rope(switchable_rope, rope_types=("linear",), examples=1, failure_file=store)
    assert json.loads(store.read_text()) == {}


def test_an_unreadable_failure_file_never_hides_the_failure(tmp_path):
    store = tmp_path / "failures.json"
    store.write_text("[1, 2]")
    with pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_rope(functools.partial(hf_rope, plant="linear_factor_ignored"), rope_types=("linear",),
                             failure_file=store)
    assert "hf_rope_config.hf_rope(plant='linear_factor_ignored')/halfsplit/torch" in json.loads(store.read_text())
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.warns(UserWarning, match="not written"), pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_rope(functools.partial(hf_rope, plant="linear_factor_ignored"), rope_types=("linear",),
                             failure_file=blocked / "failures.json")


@pytest.mark.parametrize("kwargs,words", [
    ({"dtypes": ("float64",)}, "dtypes: expected a non-empty list of float32, bfloat16, float16; got ('float64',)"),
    ({"dtypes": "float32"}, "dtypes: expected a non-empty list"),
    ({"rope_types": ("ntk",)}, "rope_types: expected a non-empty list of default, linear"),
    ({"layout": "gptj"}, "layout: expected one of halfsplit, interleaved; got 'gptj'"),
    ({"array": "jax"}, "array: expected 'torch' or 'numpy'; got 'jax'"),
    ({"array": "numpy", "dtypes": ("bfloat16",)}, "dtypes: numpy has no bfloat16"),
    ({"examples": 0}, "examples: expected a positive integer; got 0"),
    ({"max_position": 10}, "max_position: expected an integer >= 64; got 10"),
])
def test_bad_arguments_are_named(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        pe_suite.verify_rope(hf_rope, failure_file=None, **kwargs)


def test_json_copy_is_the_json_round_trip_and_a_copy():
    """_json_copy (each call's config and positions of its own) gives what json.loads(json.dumps(...)) gives, for
    drawn configs of every rope_type and form, and shares nothing with the original."""
    rng = random.Random(20261205)
    for _ in range(200):
        case = v.draw_case(rng, rope_types=pe_suite.config_space.ROPE_TYPES, forms=("text", "partial", "mrope"),
                           dtypes=("float32",), layout="halfsplit", scenarios=pe_suite.config_space.SCENARIOS,
                           max_position=1 << 21)
        for value in (case["config"], case["positions"], {"t": (1, [2.5, None]), 3: True}):
            copy = v._json_copy(value)
            assert copy == json.loads(json.dumps(value))
            assert json.dumps(copy) == json.dumps(json.loads(json.dumps(value)))
            if isinstance(value, dict) and isinstance(value.get("rope_scaling"), dict):
                copy["rope_scaling"]["factor"] = -1.0
                assert value["rope_scaling"].get("factor") != -1.0

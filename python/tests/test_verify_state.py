"""State across calls (issue 51): verify_rope's "crossing" scenario serves a prefill that ends at the original
context, decode steps past it, then a new sequence, call by call to one kernel. HF's own modules pass: LongRoPE
choosing its list per call, and dynamic NTK's stateful dynamic_rope_update (it grows with a longer call and
resets below the original length), both transcribed here from transformers. Two engine-style mistakes of state
are caught and named: a LongRoPE module whose cos/sin cache is built once with the first call's list and not
rebuilt when the sequence crosses original_max_position_embeddings, and a dynamic NTK module that never shrinks
back. The engines' own readings: transformers' dynamic NTK keeps a longer call's base (named as state), vLLM 0.6's
LongRoPE reads position 0 at exactly the original context (caught), TGI's per-token list passes under
semantics="tgi" and HF's per-sequence one is named there; a stateless kernel with its own length rule is not
named as state."""
import json

import pytest
import torch

import pe_suite
from pe_suite import config_space as space
from pe_suite import verify as v
from hf_rope_config import hf_rope, inv_freq_and_scaling, rotate_half


class StaleLongRoPE:
    """Phi-3's LongRoPE as an engine module: the cos/sin cache built at the first call, to max_position_embeddings
    (or the call's length, if longer), with the list that call's length picks (HF's rule: long_factor when
    max(position_ids) + 1 > original_max_position_embeddings), then indexed by position; grown with the same list
    when a call needs more rows, never rebuilt when a sequence crosses the original context."""

    def __init__(self, config):
        self.config, self.cos, self.sin, self.seq_len = config, None, None, None

    def _build(self, rows):
        inv, scaling = inv_freq_and_scaling(self.config, self.seq_len)
        freqs = (inv[:, None] @ torch.arange(rows, dtype=torch.float32)[None, :]).T  # HF's float32 angles
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos() * scaling, emb.sin() * scaling

    def __call__(self, x, positions):
        longest = int(positions.max()) + 1
        if self.seq_len is None:
            self.seq_len = longest
        if self.cos is None or longest > self.cos.shape[0]:
            self._build(max(longest, self.config["max_position_embeddings"]))
        cos, sin = self.cos[positions].to(x.dtype)[:, None], self.sin[positions].to(x.dtype)[:, None]
        return x * cos + rotate_half(x) * sin


class HfDynamicNTK:
    """transformers' dynamic_rope_update for rope_type dynamic: inv_freq recomputed when a call is longer than the
    longest so far (max_seq_len_cached), reset to the original when a call is shorter than the original length
    while the cached one is longer. `shrinks=False`: the reset left out (a base that never shrinks back)."""

    def __init__(self, config, shrinks=True):
        self.config, self.shrinks = config, shrinks
        self.original = self.cached = self.used = config["max_position_embeddings"]

    def __call__(self, x, positions):
        seq_len = int(positions.max()) + 1
        if seq_len > self.cached:
            self.cached = self.used = seq_len
        if self.shrinks and seq_len < self.original and self.cached > self.original:
            self.cached = self.used = self.original
        return hf_rope(x, positions, self.config, rule=lambda c, n, plant: inv_freq_and_scaling(c, self.used))


def per_config(module, **kwargs):
    """A kernel fn(x, positions, config) keeping one module per config, as an engine keeps one per model."""
    kept = {}

    def fn(x, positions, config):
        key = json.dumps(config, sort_keys=True)
        if key not in kept:
            kept[key] = module(config, **kwargs)
        return kept[key](x, positions)
    return fn


def test_crossing_cases_straddle_the_original_context():
    import random
    for i in range(40):
        case = v.draw_case(random.Random(f"crossing:{i}"), rope_types=("longrope", "dynamic"), forms=("text",),
                           dtypes=("float32",), layout="halfsplit", scenarios=("crossing",), max_position=1 << 21)
        threshold, positions = space.length_threshold(case["config"]), case["positions"]
        calls = v._prefill_then_steps(len(positions), again=True)
        (prefill, _), *steps, (again, what) = calls
        assert what == "as a new sequence after the decode steps"
        assert max(positions[prefill]) + 1 == threshold  # the prefill's length is the original context
        assert all(positions[rows.start] + 1 > threshold for rows, _ in steps)
        assert max(positions[again]) + 1 < threshold


@pytest.mark.parametrize("dtypes", [("float32",), ("bfloat16",)])
def test_hfs_per_call_longrope_and_stateful_dynamic_pass_the_crossing(dtypes):
    summary = pe_suite.verify_rope(hf_rope, rope_types=("longrope", "dynamic"), scenarios=("crossing",),
                                   dtypes=dtypes, examples=60, failure_file=None)
    assert summary["examples"] == 60
    pe_suite.verify_rope(per_config(HfDynamicNTK), rope_types=("dynamic",), scenarios=("crossing",), dtypes=dtypes,
                         examples=100, failure_file=None)


def test_hfs_dynamic_base_kept_from_a_longer_call_is_named_as_state():
    # transformers keeps the longest call's base while calls stay past the original length (it resets only below
    # it): a call after a longer one is rotated under the longer one's base, where a fresh module (and the per-call
    # reference) uses its own. The outputs depend on history; verify_rope says so, and which call's table it was.
    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(per_config(HfDynamicNTK), rope_types=("dynamic",), dtypes=("float32",), examples=100,
                             failure_file=None)
    text = str(e.value)
    assert e.value.property == v.ROW_ALONE, text
    assert "is the exact rotation under seq_len" in text and "the kernel kept that call's table" in text, text


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_longrope_cache_not_rebuilt_across_the_original_context_is_caught_and_named(dtype):
    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(per_config(StaleLongRoPE), rope_types=("longrope",), dtypes=(dtype,), examples=100,
                             failure_file=None)
    text = str(e.value)
    assert e.value.property == v.PREFILL_DECODE, text
    assert "as a decode step" in text
    assert "long_factor) is the exact rotation under seq_len" in text, text
    assert "(short_factor); made first, under a config it had not met (head_dim" in text, text
    assert "the call passes: the kernel kept that call's table" in text, text
    assert "positions drawn as crossing" in text
    # Its snippet makes the prefill, then the failing step, on a fresh kernel: the failure shows from the start.
    assert "y = fn(x[0:2], positions[..., 0:2], config)\n    y = fn(x[2:3]" in text, text


def test_a_dynamic_base_that_never_shrinks_back_is_caught_on_the_new_sequence():
    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(per_config(HfDynamicNTK, shrinks=False), rope_types=("dynamic",), dtypes=("float32",),
                             examples=100, failure_file=None)
    text = str(e.value)
    assert e.value.property == v.PREFILL_DECODE, text
    assert "as a new sequence after the decode steps" in text, text
    assert "(seq_len" in text and "rope_theta unscaled) is the exact rotation under seq_len" in text, text
    assert "the NTK base for length" in text and "the call passes: the kernel kept that call's table" in text, text


def test_table_families_do_not_draw_the_crossing():
    assert "crossing" in space.SCENARIOS and "crossing" not in space.TABLE_SCENARIOS
    with pytest.raises(ValueError, match="scenarios"):
        pe_suite.verify_sinusoidal(lambda p, c: None, scenarios=("crossing",), failure_file=None)


class Vllm06LongRoPE:
    """vLLM 0.6's Phi3LongRoPEScaledRotaryEmbedding (rotary_embedding.py): one cos/sin cache of the short list's
    original_max_position_embeddings rows, then the long list's max_position_embeddings rows; a batch with any
    position > original_max_position_embeddings reads every token from the long rows (index + L), else from the
    short ones. A batch whose longest position is L itself reads index L: the long rows' first, position 0."""

    def __init__(self, config):
        s, L = config["rope_scaling"], config["original_max_position_embeddings"]
        self.L, dim = L, config["head_dim"]
        scale = config["max_position_embeddings"] / L
        mscale = 1.0 if scale <= 1.0 else (1 + torch.log(torch.tensor(scale, dtype=torch.float64)).item() /
                                           torch.log(torch.tensor(float(L), dtype=torch.float64)).item()) ** 0.5

        def cache(rows, factors):
            inv = 1.0 / (torch.tensor(factors, dtype=torch.float32) *
                         config["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
            freqs = torch.einsum("i,j -> ij", torch.arange(rows, dtype=torch.float), inv)
            return torch.cat((freqs.cos() * mscale, freqs.sin() * mscale), dim=-1)
        self.cache = torch.cat((cache(L, s["short_factor"]), cache(config["max_position_embeddings"], s["long_factor"])))

    def __call__(self, x, positions):
        offset = (torch.any(positions > self.L).float() * torch.full_like(positions, self.L)).long()
        cos, sin = self.cache[positions + offset].to(x.dtype).chunk(2, dim=-1)
        cos, sin = cos.repeat(1, 2)[:, None], sin.repeat(1, 2)[:, None]
        return x * cos + rotate_half(x) * sin


def test_vllm_06_longrope_at_exactly_the_original_context_is_caught():
    # A real engine's boundary: HF's list switches when max(position_ids) + 1 > L, vLLM 0.6's when a position > L,
    # and its short rows end at L - 1: the first decode step at position L is rotated by position 0. The crossing's
    # first step sits there; elsewhere the two agree, so this is the scenario that finds it.
    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(per_config(Vllm06LongRoPE), rope_types=("longrope",), dtypes=("float32",),
                             max_position=16000, semantics="vllm", failure_file=None)
    text = str(e.value)
    assert e.value.property == v.PREFILL_DECODE, text
    assert "as a decode step" in text and ("at position 2048:" in text or "at position 4096:" in text), text
    assert "every row rotated by position 0" in text, text  # read back from the failing call's position, widened


def test_rope_scaling_seq_len_states_the_length_an_engine_read():
    # pe-suite's own key: the length the table was built for, where it is not max(position_ids) + 1 (HF's).
    config = {"head_dim": 8, "rope_theta": 10000.0, "original_max_position_embeddings": 16,
              "max_position_embeddings": 128,
              "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0],
                               "long_factor": [2.0, 3.0, 5.0, 8.0]}}
    x, positions = torch.randn(2, 1, 8), torch.tensor([16, 17])  # seq_len 18 > 16: the long list
    short = StaleLongRoPE(dict(config))
    short.seq_len = 10  # a kept short table
    y = short(x, positions)
    assert pe_suite.check_rope(x, y, positions, hf_config=config).verdict == "FAIL"
    kept = dict(config, rope_scaling=dict(config["rope_scaling"], seq_len=10))
    report = pe_suite.check_rope(x, y, positions, hf_config=kept)
    assert report.passed, str(report)
    assert "rope_scaling.seq_len: pe-suite's own key" in str(report)
    for bad in (0, 2.5, "10"):
        with pytest.raises(ValueError, match=r"rope_scaling\.seq_len"):
            pe_suite.check_rope(x, y, positions, hf_config=dict(config, rope_scaling=dict(config["rope_scaling"],
                                                                                           seq_len=bad)))


def test_a_stateless_kernel_with_its_own_length_rule_is_not_named_as_state():
    # seq_len read as max(position_ids), not + 1 (vLLM 0.6's "a position > L"): the decode step at L takes the short
    # list, which is also what a kept prefill table would give. Made first under a config it has not met, the call
    # fails too, so no state is claimed.
    def off_by_one(x, positions, config):
        return hf_rope(x, positions, config, rule=lambda c, n, plant: inv_freq_and_scaling(c, n - 1, plant))

    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(off_by_one, rope_types=("longrope",), forms=("text", "partial"), dtypes=("float32",),
                             examples=100, failure_file=None)
    assert "kept that call's table" not in str(e.value), str(e.value)


class TgiSuRope:
    """text-generation-inference's SuRotaryEmbedding (layers/rotary.py): one cos/sin table whose rows below
    original_max_position_embeddings use the short factors and the rows from it on the long ones (torch.outer of
    the positions and each list's inv_freq), both times the scaling factor, indexed by each token's position."""

    def __init__(self, config):
        self.config = config

    def __call__(self, x, positions):
        c, s = self.config, self.config["rope_scaling"]
        L, d = c["original_max_position_embeddings"], c["head_dim"]
        factor = c["max_position_embeddings"] / L
        scaling = 1.0 if factor <= 1.0 else (1 + torch.log(torch.tensor(factor)).item() /
                                             torch.log(torch.tensor(float(L))).item()) ** 0.5
        exponent = torch.arange(0, d, 2, dtype=torch.int64).float() / d
        rows = int(positions.max()) + 1
        t = torch.arange(rows, dtype=torch.float32)
        freqs = torch.cat([torch.outer(t[:L], 1.0 / (torch.tensor(s["short_factor"]) * c["rope_theta"] ** exponent)),
                           torch.outer(t[L:], 1.0 / (torch.tensor(s["long_factor"]) * c["rope_theta"] ** exponent))])
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = (emb.cos() * scaling)[positions].to(x.dtype), (emb.sin() * scaling)[positions].to(x.dtype)
        return x * cos[:, None] + rotate_half(x) * sin[:, None]


def test_tgis_per_token_longrope_passes_under_its_semantics_and_hfs_fails_there():
    pe_suite.verify_rope(per_config(TgiSuRope), rope_types=("longrope",), semantics="tgi", dtypes=("float32",),
                         examples=100, max_position=1 << 15, failure_file=None)
    with pytest.raises(v.VerifyError) as e:
        pe_suite.verify_rope(hf_rope, rope_types=("longrope",), semantics="tgi", dtypes=("float32",), examples=100,
                             max_position=1 << 15, failure_file=None)
    assert "longrope switch per-sequence (given: per-token)" in str(e.value), str(e.value)

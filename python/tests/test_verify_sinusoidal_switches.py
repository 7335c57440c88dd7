"""verify_sinusoidal with diffusers' switches drawn (issue 49): kernels written here from their published
definitions, not from pe-suite's. diffusers' models/embeddings.py get_timestep_embedding (v0.31) and openai/whisper's
model.py `sinusoids`, in numpy float32 as torch computes them in float32 (a Python float times a float32 tensor
rounds the scalar to float32 first, as numpy does). The correct kernels pass; a kernel that ignores a drawn
switch fails, and the failure names the switch in its minimal case, its snippet and its diagnosis."""
import functools

import numpy as np
import pytest

import pe_suite
from published_tables import get_timestep_embedding

SEED = 20261205
TIMESTEP_SCENARIOS = ("prefill", "decode", "packed", "timesteps")


def diffusers_kernel(positions, config, plant=None):
    """The kernel under test: get_timestep_embedding with the config's switches (plant: one of them misread)."""
    flip = False if plant == "flip_ignored" else config["flip_sin_to_cos"]
    shift = 1 if plant == "shift_hard_coded" else config["downscale_freq_shift"]
    scale = 1 if plant == "scale_ignored" else config["scale"]
    table = get_timestep_embedding(positions, config["dim"], flip_sin_to_cos=flip, downscale_freq_shift=shift,
                                   scale=scale, max_period=config["base"])
    return table.astype(config["dtype"])


def whisper_kernel(positions, config):
    """openai/whisper model.py `sinusoids` at the given positions: log_timescale_increment in float64, the rest
    in float32; [sin | cos], the exponent over channels // 2 - 1 (a shift of 1)."""
    channels, max_timescale = config["dim"], config["base"]
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = np.exp(np.float32(-log_timescale_increment) * np.arange(channels // 2, dtype=np.float32))
    scaled_time = np.asarray(positions).astype(np.float32)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1).astype(config["dtype"])


def verify_diffusers(fn, **kw):
    args = dict(examples=30, seed=SEED, layout="concatenated", flip_sin_to_cos="drawn",
                downscale_freq_shift="drawn", scale="drawn", odd_dims=True, scenarios=TIMESTEP_SCENARIOS,
                array="numpy", failure_file=None)
    return pe_suite.verify_sinusoidal(fn, **dict(args, **kw))


def test_get_timestep_embedding_passes_with_every_switch_drawn():
    seen = []

    def recording(positions, config):
        seen.append((positions.dtype.name, dict(config)))
        return diffusers_kernel(positions, config)

    summary = verify_diffusers(recording)
    assert summary["examples"] == 30
    # The draw reached every switch's values, odd widths and real timesteps: a pass that saw one value proves
    # nothing about the others.
    configs = [c for _, c in seen]
    for name, values in (("flip_sin_to_cos", {False, True}), ("downscale_freq_shift", {0.0, 1.0}),
                         ("scale", {1.0, 1000.0})):
        assert {c[name] for c in configs} == values, name
    assert any(c["dim"] % 2 for c in configs) and any(c["dim"] % 2 == 0 for c in configs)
    assert {"float32", "int64"} <= {dtype for dtype, _ in seen}
    assert all(c["layout"] == "concatenated" for c in configs)


@pytest.mark.parametrize("plant,switch,value,words", [
    ("flip_ignored", "flip_sin_to_cos", True, "flip_sin_to_cos True"),
    ("shift_hard_coded", "downscale_freq_shift", 0.0, "downscale_freq_shift 0,"),
    ("scale_ignored", "scale", 1000.0, "scale 1000,")])
def test_an_ignored_switch_is_caught_and_named(plant, switch, value, words):
    with pytest.raises(pe_suite.verify.VerifyError) as info, np.errstate(divide="ignore", invalid="ignore"):
        verify_diffusers(functools.partial(diffusers_kernel, plant=plant))  # dim/2 - 1 = 0 at dim 2: NaN
    e, text = info.value, str(info.value)
    # The minimal case keeps the switch at the value the kernel ignores, says so, and the snippet passes it on.
    assert e.case["config"][switch] == value, text
    assert words in text.split("minimal case:")[1].splitlines()[0], text
    assert f"{switch}={value!r}" in text, text
    assert switch in text.split("diagnosis")[1], text


def test_the_snippet_reproduces_a_timestep_failure():
    kernel = functools.partial(diffusers_kernel, plant="flip_ignored")
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        verify_diffusers(kernel, scenarios=("timesteps",))
    text = str(info.value)
    block = text.split("minimal case:")[1].split("\n  diagnosis")[0]
    snippet = "\n".join(line[4:] for line in block.splitlines()[1:])
    printed = []
    exec(snippet, {"fn": kernel, "print": printed.append})  # noqa: S102 -- the snippet is the product under test
    assert len(printed) == 1 and not printed[0].passed, snippet
    assert "dtype=np.float32" in snippet, snippet


def test_whisper_sinusoids_pass_under_its_fixed_convention():
    pe_suite.verify_sinusoidal(whisper_kernel, examples=30, seed=SEED, layout="concatenated",
                               downscale_freq_shift=1, array="numpy", failure_file=None)
    # Under the paper's shift it fails, named (and divides by channels // 2 - 1 = 0 at dim 2).
    with pytest.raises(pe_suite.verify.VerifyError) as info, np.errstate(divide="ignore", invalid="ignore"):
        pe_suite.verify_sinusoidal(whisper_kernel, examples=30, seed=SEED, layout="concatenated",
                                   array="numpy", failure_file=None)
    assert "downscale_freq_shift" in str(info.value).split("diagnosis")[1], str(info.value)


def test_bad_switch_arguments_are_named():
    with pytest.raises(ValueError, match="flip_sin_to_cos: expected True, False or 'drawn'; got 'yes'"):
        pe_suite.verify_sinusoidal(diffusers_kernel, flip_sin_to_cos="yes")
    with pytest.raises(ValueError, match="scale: expected a finite non-zero number or 'drawn'; got 0"):
        pe_suite.verify_sinusoidal(diffusers_kernel, scale=0)
    with pytest.raises(ValueError, match="downscale_freq_shift: expected a multiple of 1/2 or 'drawn'; got 0.25"):
        pe_suite.verify_sinusoidal(lambda p, c: None, downscale_freq_shift=0.25)
    with pytest.raises(ValueError, match="downscale_freq_shift 600: no table width"):
        pe_suite.verify_sinusoidal(diffusers_kernel, downscale_freq_shift=600)
    with pytest.raises(ValueError, match="scenarios: expected a non-empty list of .*timesteps"):
        pe_suite.verify_sinusoidal(diffusers_kernel, scenarios=("steps",))


def test_a_kept_failure_is_replayed_only_under_the_switches_it_was_drawn_with(tmp_path):
    kept = tmp_path / "failures.json"
    kernel = functools.partial(diffusers_kernel, plant="flip_ignored")
    with pytest.raises(pe_suite.verify.VerifyError):
        verify_diffusers(kernel, failure_file=kept, key="k")
    with pytest.raises(pe_suite.verify.VerifyError, match="replayed from"):  # the JSON case read back, bools too
        verify_diffusers(kernel, failure_file=kept, key="k")
    # A run whose kernel fixes flip_sin_to_cos=False could not draw the kept case (flip True): not replayed,
    # and the kernel, right under that convention, passes.
    verify_diffusers(kernel, failure_file=kept, key="k", flip_sin_to_cos=False)


def test_a_torch_kernel_with_the_layout_drawn_passes_in_half_precision_too():
    """get_timestep_embedding's halves interleaved when config asks (each pair's sin, cos; cos first under
    flip_sin_to_cos), computed in float32 and returned in the dtype asked, through torch tensors."""
    torch = pytest.importorskip("torch")
    layouts = set()

    def kernel(positions, config):
        layouts.add(config["layout"])
        y = get_timestep_embedding(positions.numpy(), config["dim"], config["flip_sin_to_cos"],
                                   config["downscale_freq_shift"], config["scale"], config["base"])
        if config["layout"] == "interleaved":
            half, pairs = config["dim"] // 2, np.zeros_like(y)
            pairs[:, 0:2 * half:2], pairs[:, 1:2 * half:2] = y[:, :half], y[:, half:2 * half]
            y = pairs
        return torch.from_numpy(y).to(getattr(torch, config["dtype"]))

    pe_suite.verify_sinusoidal(kernel, examples=30, seed=SEED, dtypes=("float32", "bfloat16", "float16"),
                               layout="drawn", flip_sin_to_cos="drawn", downscale_freq_shift="drawn",
                               scale="drawn", odd_dims=True, scenarios=TIMESTEP_SCENARIOS, failure_file=None)
    assert layouts == {"interleaved", "concatenated"}

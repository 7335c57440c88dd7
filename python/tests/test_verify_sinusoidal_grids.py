"""verify_sinusoidal's "grid" scenario (issue 49): kernels written from diffusers' published definitions
(models/embeddings.py v0.31: get_2d_sincos_pos_embed, get_3d_sincos_pos_embed; MAE's util/pos_embed.py for a
base_size of None), transcribed in numpy in published_tables.py, not from pe-suite's code. The correct kernel passes
at every seed; each planted mistake -- the halves' axes swapped (emb_h/emb_w), the cells flattened w-major (H and W
swapped in the flattening), interpolation_scale ignored, the extra tokens missing -- is caught and named at each of
N_SEEDS seeds, with the grid kept in its minimal case and its snippet."""
import math
import pathlib
import re

import numpy as np
import pytest

import pe_suite
import published_tables
from published_tables import sincos_2d, sincos_3d

N_SEEDS = 10
SEEDS = [20261205 + k for k in range(N_SEEDS)]
EXAMPLES = 24


def diffusers_grid(grid, config, plant=None):
    """The kernel under test: get_2d_sincos_pos_embed(dim, (H, W), cls_token=True, extra_tokens, interpolation_scale,
    base_size) or get_3d_sincos_pos_embed(dim, (W, H), T, interpolation_scale, temporal_interpolation_scale), one
    misread where `plant` says so."""
    dim, scale = config["dim"], config["interpolation_scale"]
    if plant == "interpolation_scale_ignored":
        scale = 1.0
    swap = plant == "axes_swapped"
    if len(grid) == 2:
        extra = 0 if plant == "extra_tokens_missing" else config["extra_tokens"]
        table = sincos_2d(dim, grid, extra_tokens=extra, interpolation_scale=scale, base_size=config["base_size"],
                          swap_halves=swap)
        cells = table[extra:].reshape(grid[0], grid[1], dim)
    else:
        t, h, w = grid
        table = sincos_3d(dim, (w, h), t, spatial_interpolation_scale=scale,
                          temporal_interpolation_scale=config["temporal_interpolation_scale"], swap_halves=swap)
        table = table.reshape(-1, dim)
        extra, cells = 0, table.reshape(t, h, w, dim)
    if plant == "flattened_w_major":  # each frame's cells w outer, h inner: rows w*H + h
        cells = np.swapaxes(cells, -3, -2)
        table = np.concatenate([table[:extra], cells.reshape(-1, dim)])
    return table.astype(config["dtype"])


def verify_grids(fn, seed, **kw):
    args = dict(examples=EXAMPLES, seed=seed, layout="concatenated", scenarios=("grid",), array="numpy",
                failure_file=None)
    return pe_suite.verify_sinusoidal(fn, **dict(args, **kw))


@pytest.mark.parametrize("seed", SEEDS)
def test_diffusers_grids_pass_with_every_value_drawn(seed):
    seen = []

    def recording(grid, config):
        seen.append((tuple(grid), dict(config)))
        return diffusers_grid(grid, config)

    assert verify_grids(recording, seed)["examples"] == EXAMPLES
    if seed != SEEDS[0]:
        return
    # The draw reached 2-D and 3-D, square and non-square, every value of each knob: a pass that saw one proves
    # nothing about the others.
    two = [(g, c) for g, c in seen if len(g) == 2]
    three = [(g, c) for g, c in seen if len(g) == 3]
    assert two and three
    assert any(g[0] == g[1] for g, _ in two) and any(g[0] != g[1] for g, _ in two)
    for name, values, cases in (("base_size", {None, 16.0, 8.0}, two), ("extra_tokens", {0, 1, 4}, two),
                                ("interpolation_scale", {1.0, 2.0, 0.5, 1.875}, two + three),
                                ("temporal_interpolation_scale", {1.0, 2.0}, three)):
        assert {c[name] for _, c in cases} == values, name
    assert all(max(g) <= 24 for g, _ in seen)


# Each mistake and the words that name it: the diagnosis's (the error's, for a table of the wrong shape). A square
# grid flattened w-major is its axes swapped: the same table. An ignored interpolation_scale reads back on both
# spatial axes, or on the one whose size is not 1 (the other's coordinates are all 0).
PLANTS = {
    "axes_swapped": ("axes w and h swapped",),
    "flattened_w_major": ("cells flattened w-major", "axes w and h swapped"),
    "interpolation_scale_ignored": ("interpolation_scale 1 read back", "read back: interpolation_scale 1 (given"),
    "extra_tokens_missing": ("the extra tokens are missing",),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_mistake_is_caught_and_named(plant, seed):
    with pytest.raises(pe_suite.verify.VerifyError) as e:
        verify_grids(lambda grid, config: diffusers_grid(grid, config, plant), seed)
    text = str(e.value)
    assert any(words in text for words in PLANTS[plant]), text
    case = e.value.case
    assert case["scenario"] == "grid" and "grid" in case["config"], text  # the shrinker kept the grid
    assert f"fn({tuple(case['config']['grid'])!r}, config)" in text, text  # and the snippet builds it
    assert "grid=" in text, text
    if plant == "interpolation_scale_ignored":
        assert case["config"]["interpolation_scale"] != 1.0  # only a drawn scale other than 1 shows it


def test_the_snippet_reproduces_the_minimal_case():
    """The snippet's code, run with the planted kernel as fn, prints a failing check of the same grid."""
    with pytest.raises(pe_suite.verify.VerifyError) as e:
        verify_grids(lambda grid, config: diffusers_grid(grid, config, "axes_swapped"), SEEDS[0])
    lines = str(e.value).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "import numpy as np")
    code = "\n".join(line.strip() for line in lines[start:start + 5])
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"fn": lambda grid, config: diffusers_grid(grid, config, "axes_swapped")})  # noqa: S102
    assert "FAIL" in out.getvalue(), out.getvalue()
    assert math.prod(e.value.case["config"]["grid"]) >= 2


def test_grid_arguments_are_checked():
    ok = lambda grid, config: diffusers_grid(grid, config)  # noqa: E731
    for kw, words in ((dict(grids=(4,)), "grids"), (dict(base_size=0), "base_size"),
                      (dict(interpolation_scale="x"), "interpolation_scale"), (dict(extra_tokens=-1), "extra_tokens"),
                      (dict(temporal_interpolation_scale=float("nan")), "temporal_interpolation_scale")):
        with pytest.raises(ValueError, match=words):
            verify_grids(ok, SEEDS[0], **kw)
    # A kernel with its values fixed: diffusers' default base_size 16, no extra token, 2-D only.
    assert verify_grids(ok, SEEDS[0], grids=(2,), base_size=16, extra_tokens=0)["examples"] == EXAMPLES


def test_the_manuals_example_runs(tmp_path, monkeypatch):
    """docs/python.md's verify_sinusoidal grid block, as written, with diffusers' import served by the numpy
    transcription (its signature, published_tables.get_2d_sincos_pos_embed)."""
    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "get_2d_sincos_pos_embed(" in b)
    assert "from diffusers.models.embeddings import get_2d_sincos_pos_embed" in block
    calls = []

    def recording(*args, **kw):
        calls.append(args[1])
        return published_tables.get_2d_sincos_pos_embed(*args, **kw)

    monkeypatch.chdir(tmp_path)  # the default failure file
    code = block.replace("from diffusers.models.embeddings import get_2d_sincos_pos_embed", "")
    exec(code, {"get_2d_sincos_pos_embed": recording})  # noqa: S102
    assert len(calls) >= 100 and all(len(g) == 2 for g in calls)

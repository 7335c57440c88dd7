"""verify_sinusoidal's space beyond the paper's table: diffusers' switches (models/embeddings.py,
get_timestep_embedding: flip_sin_to_cos, downscale_freq_shift, scale) and the layout, each fixed (the kernel's
convention) or drawn (the kernel reads it from config); odd widths (the last channel a zero pad, as diffusers and
fairseq pad); and positions drawn as diffusion timesteps, real numbers. The shared scenarios
(config_space.json, compiled into the C++ properties too) hold token positions only, so "timesteps" is a
scenario of verify_sinusoidal's alone, and so is "grid": 2-D and 3-D grids as diffusers' get_2d_sincos_pos_embed and
get_3d_sincos_pos_embed (MAE, DiT, SD3, CogVideoX) build them, their base_size, interpolation_scale,
temporal_interpolation_scale and extra_tokens fixed or drawn as the switches are. Every draw is a function of a random.Random, so a seed reproduces a case."""
import math

import numpy as np

from . import config_space as space

DRAWN = "drawn"
TIMESTEPS = "timesteps"
GRID = "grid"
SCENARIOS = space.TABLE_SCENARIOS + (TIMESTEPS, GRID)
LAYOUTS = ("interleaved", "concatenated")
# The values a drawn switch takes: the layout both ways; the order both ways (Stable Diffusion's UNets flip);
# the shift of the paper and SD's UNets (freq_shift 0) and of get_timestep_embedding's default, fairseq, Whisper
# and tensor2tensor (1); the scale 1 and Flux's guidance embedding's 1000 (on t in [0, 1)).
DRAWS = {"layout": LAYOUTS, "flip_sin_to_cos": (False, True), "downscale_freq_shift": (0.0, 1.0),
         "scale": (1.0, 1000.0)}
# Where the shrinker takes a drawn switch: the paper's table.
SIMPLEST = {"layout": "interleaved", "flip_sin_to_cos": False, "downscale_freq_shift": 0.0, "scale": 1.0}


def switches(**given):
    """{name: the values a case takes} from verify_sinusoidal's arguments (layout, flip_sin_to_cos,
    downscale_freq_shift, scale): one value when fixed, DRAWS' when "drawn". ValueError naming a bad one."""
    out = {}
    for name, value in given.items():
        if isinstance(value, str) and value == DRAWN:
            out[name] = DRAWS[name]
        elif name == "layout":
            if value not in LAYOUTS:
                raise ValueError(f"layout: expected one of {', '.join(LAYOUTS)}; got {value!r} (or 'drawn')")
            out[name] = (value,)
        elif name == "flip_sin_to_cos":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"flip_sin_to_cos: expected True, False or 'drawn'; got {value!r}")
            out[name] = (bool(value),)
        else:  # a real number; a scale of 0 would make every table the same
            real = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            if not real or not math.isfinite(value) or (name == "scale" and value == 0):
                want = "a finite non-zero number" if name == "scale" else "a finite number"
                raise ValueError(f"{name}: expected {want} or 'drawn'; got {value!r}")
            # The reference reads the exponent's denominator dim/2 - S as a multiple of 1/2 (its frequency dim).
            if name == "downscale_freq_shift" and 2 * value != math.floor(2 * value):
                raise ValueError(f"downscale_freq_shift: expected a multiple of 1/2 or 'drawn'; got {value!r}")
            out[name] = (float(value),)
    return out


def dims(widths, drawn):
    """The widths a case may take: get_timestep_embedding divides by dim/2 - downscale_freq_shift, so a width
    needs dim // 2 above the smallest shift drawn. ValueError when none does."""
    out = tuple(d for d in widths if d // 2 > min(drawn["downscale_freq_shift"]))
    if not out:
        raise ValueError(f"downscale_freq_shift {drawn['downscale_freq_shift'][0]:g}: no table width drawn has "
                         f"dim/2 above it")
    return out


def valid_dim(config, d, odd_dims):
    """Whether a shrink to width d stays in the declared space under the case's shift."""
    return d >= 2 and (odd_dims or d % 2 == 0) and d // 2 > config["downscale_freq_shift"]


def draw_switches(rng, drawn, dim):
    """The switches of one case: a fixed one as given, a drawn one from its values (a shift only below dim/2);
    no draw consumed for a fixed one, so a run with every switch fixed draws the cases it drew before them."""
    out = {}
    for name, values in drawn.items():
        values = [v for v in values if name != "downscale_freq_shift" or dim // 2 > v]
        out[name] = values[0] if len(values) == 1 else rng.choice(values)
    return out


def draw_positions(rng, scenario, tokens, max_position):
    """Positions of one call: the shared scenarios' token positions, or a batch of timesteps as float32 stores
    them (each value exact in float32, kept as a Python float): DDPM's integers 0..999, SD3's t*1000 for t in
    [0, 1), or Flux's t in [0, 1) (scaled by the kernel's scale)."""
    if scenario != TIMESTEPS:
        return space.draw_positions(rng, scenario, tokens, max_position)
    kind = rng.randrange(3)
    f32 = np.float32
    if kind == 0:
        return [float(rng.randrange(1000)) for _ in range(tokens)]
    if kind == 1:
        return [float(f32(f32(rng.random()) * f32(1000))) for _ in range(tokens)]
    return [float(f32(rng.random())) for _ in range(tokens)]


def probe_positions(rng, scenario, tokens, max_position):
    """The diagnosis's positions: the scenario's, but timesteps spread over DDPM's 0..999 in integer steps (21 apart
    for 48): the frequencies read back from turning angles, where Flux's t in [0, 1) leaves the fast pairs barely
    turned under a scale of 1 and no convention is determined."""
    if scenario != TIMESTEPS:
        return space.draw_positions(rng, scenario, tokens, max_position)
    step = max(1, 1000 // tokens)
    return [float(k * step) for k in range(tokens)]


def declared(case, drawn, dtypes, scenarios, odd_dims, grids=(), knobs=None):
    """Whether a kept case is one this run could have drawn (else it is not replayed): its dtype, scenario,
    switches among the declared values and its width's parity (a grid's: its axes, knobs and width)."""
    c = case.get("config")
    if not isinstance(c, dict) or case.get("dtype") not in dtypes or case.get("scenario") not in scenarios:
        return False
    if not all(name in c and c[name] in values for name, values in drawn.items()):
        return False
    if not isinstance(c.get("dim"), int):
        return False
    if case["scenario"] == GRID:
        return grid_declared(c, grids, knobs)
    return valid_dim(c, c["dim"], odd_dims)


def simpler_switches(case, drawn):
    """Shrinks of the drawn switches toward the paper's table (a fixed switch is the kernel's and stays)."""
    c = case["config"]
    for name, values in drawn.items():
        if len(values) > 1 and c[name] != SIMPLEST[name] and SIMPLEST[name] in values:
            yield dict(case, config=dict(c, **{name: SIMPLEST[name]}))


def integer_timesteps(case):
    """A shrink of real timesteps: each rounded down to an integer (kept as float)."""
    p = case["positions"]
    if case["scenario"] == TIMESTEPS and any(v != math.floor(v) for v in p):
        yield dict(case, positions=[float(math.floor(v)) for v in p])


# -- grids ------------------------------------------------------------------------------------------------------
# A grid's values: base_size None (MAE's coordinates i, no division) or diffusers' 16 (DiT, PixArt) or 8; the
# interpolation_scale of 1, SD3's and PixArt's 2, 0.5 and CogVideoX's 1.875; CogVideoX's temporal 1 or 2; no extra
# token, a cls token, or four (register tokens). Their keys in config: 2-D base_size, interpolation_scale,
# extra_tokens; 3-D interpolation_scale, temporal_interpolation_scale (get_3d_sincos_pos_embed has neither base_size
# nor extra tokens).
GRID_DRAWS = {"base_size": (None, 16.0, 8.0), "interpolation_scale": (1.0, 2.0, 0.5, 1.875),
              "temporal_interpolation_scale": (1.0, 2.0), "extra_tokens": (0, 1, 4)}
GRID_SIMPLEST = {"base_size": None, "interpolation_scale": 1.0, "temporal_interpolation_scale": 1.0, "extra_tokens": 0}
GRID_KEYS = {2: ("base_size", "interpolation_scale", "extra_tokens"),
             3: ("interpolation_scale", "temporal_interpolation_scale")}
MAX_SIDE = {2: (24, 24), 3: (8, 12, 12)}  # small: a case's check and its shrink stay fast


def grid_knobs(grids, **given):
    """(grids, {name: the values a case takes}) from verify_sinusoidal's grid arguments: grids a non-empty list
    of 2 and 3; each knob one value when fixed, GRID_DRAWS' when "drawn". ValueError naming a bad one."""
    if isinstance(grids, (str, int)) or not grids or any(g not in (2, 3) for g in grids):
        raise ValueError(f"grids: expected a non-empty list of 2 and 3 (2-D, 3-D grids); got {grids!r}")
    out = {}
    for name, value in given.items():
        if isinstance(value, str) and value == DRAWN:
            out[name] = GRID_DRAWS[name]
            continue
        if name == "extra_tokens":
            ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value <= 64
            want = "an integer in [0, 64]"
        else:
            ok = (value is None and name == "base_size") or (
                isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
                and math.isfinite(value) and value > 0)
            want = "a positive number" + (" or None" if name == "base_size" else "")
        if not ok:
            raise ValueError(f"{name}: expected {want} or 'drawn'; got {value!r}")
        out[name] = (None if value is None else int(value) if name == "extra_tokens" else float(value),)
    return tuple(grids), out


def grid_dim_ok(axes, d, shift):
    """A grid's width: 2-D halves even (d % 4), 3-D D/4 and 3D/8 even (d % 16); the smallest block's half above the
    shift (2-D: d/4, 3-D: d/8)."""
    unit, smallest_half = (4, d // 4) if axes == 2 else (16, d // 8)
    return d >= unit and d % unit == 0 and smallest_half > shift


def draw_grid(rng, grids, knobs):
    """A grid's sizes ([H, W] non-square or, one case in three, square; [T, H, W]) and its knobs' values."""
    axes = rng.choice(grids)
    sizes = [rng.randint(1, n) for n in MAX_SIDE[axes]]
    if axes == 2 and rng.random() < 1 / 3:
        sizes[1] = sizes[0]
    values = {name: rng.choice(knobs[name]) for name in GRID_KEYS[axes]}
    return dict({"grid": sizes}, **values)


def grid_rows(config):
    """A grid's table rows: its cells and its extra tokens (zero, first)."""
    return math.prod(config["grid"]) + config.get("extra_tokens", 0)


def grid_declared(c, grids, knobs):
    """Whether a kept grid case is one this run could have drawn."""
    g = c.get("grid")
    if not isinstance(g, list) or len(g) not in grids or not all(isinstance(n, int) and n >= 1 for n in g):
        return False
    return all(name in c and c[name] in knobs[name] for name in GRID_KEYS[len(g)]) and \
        grid_dim_ok(len(g), c["dim"], c["downscale_freq_shift"])


def smaller_grids(case, knobs):
    """Shrinks of a grid case: each side to 1, halved, one less; a drawn knob to its simplest value."""
    c = case["config"]
    for k, n in enumerate(c["grid"]):
        for smaller in dict.fromkeys((1, n // 2, n - 1)):
            if 1 <= smaller < n:
                yield dict(case, config=dict(c, grid=c["grid"][:k] + [smaller] + c["grid"][k + 1:]))
    for name in GRID_KEYS[len(c["grid"])]:
        if len(knobs[name]) > 1 and c[name] != GRID_SIMPLEST[name] and GRID_SIMPLEST[name] in knobs[name]:
            yield dict(case, config=dict(c, **{name: GRID_SIMPLEST[name]}))

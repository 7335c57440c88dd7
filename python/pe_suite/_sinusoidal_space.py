"""verify_sinusoidal's space beyond the paper's table: diffusers' switches (models/embeddings.py,
get_timestep_embedding: flip_sin_to_cos, downscale_freq_shift, scale) and the layout, each fixed (the kernel's
convention) or drawn (the kernel reads it from config); odd widths (the last channel a zero pad, as diffusers and
fairseq pad); and positions drawn as diffusion timesteps, real numbers. The shared scenarios
(config_space.json, compiled into the C++ properties too) hold token positions only, so "timesteps" is a
scenario of verify_sinusoidal's alone. Every draw is a function of a random.Random, so a seed reproduces a case."""
import math

import numpy as np

from . import config_space as space

DRAWN = "drawn"
TIMESTEPS = "timesteps"
SCENARIOS = space.SCENARIOS + (TIMESTEPS,)
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


def declared(case, drawn, dtypes, scenarios, odd_dims):
    """Whether a kept case is one this run could have drawn (else it is not replayed): its dtype, scenario,
    switches among the declared values and its width's parity."""
    c = case.get("config")
    if not isinstance(c, dict) or case.get("dtype") not in dtypes or case.get("scenario") not in scenarios:
        return False
    if not all(name in c and c[name] in values for name, values in drawn.items()):
        return False
    return isinstance(c.get("dim"), int) and valid_dim(c, c["dim"], odd_dims)


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

"""The black-box properties of a rotation that verify_rope checks on the kernel's own outputs, beside agreement with
the exact reference: each pair's norm kept (times the attention factor), the rotation undone by its mirror image,
and <q, k> depending on the positions' difference only. Their tolerances come from the data type's rounding and a
float32 angle's (the error model below), not from the data's class budget: where that budget is loose (a float32
angle's error grows with the position), these still hold a correct kernel to a rotation, so a gain or a rotation
that is not orthogonal is caught at a million positions as at ten.

Error model, u the data type's unit roundoff (2^-24, 2^-11, 2^-8): a kernel rounds cos and sin (and their product
with the attention factor) to at most the data type, then two products and a sum; each output element is off by
at most about 4u (|x_a| + |x_b|) g, so a pair's norm by 6u |x| g. Budgets below take twice that.
- norm:     | |y_j| - g |x_j| |            <= 12 u g |x_j|
- inverse:  | M f(M f(x)) - g^2 x |_j     <= 24 u g^2 |x_j|  (M negates each pair's second channel: M R(a) M = R(-a);
            both calls read the same positions, so a float32 angle's rounding cancels)
- relative: |<y_s, y_t> - <y'_s, y'_t>|   <= sum_j g_s g_t |x_sj| |x_tj| (24 u + 2 (d_sj + d_tj + d'_sj + d'_tj)),
            y' the call at positions shifted by one offset, d_pj = (8 + j) 2^-24 |p| theta_j a float32 angle's error
            (j units more for frequencies built by repeated products, as ggml builds them).
Under dynamic and LongRoPE the frequencies depend on the sequence length (max position + 1), so <q, k> is
relative only within one length: the relative property is not checked for them.
"""
import json

import numpy as np

from . import _native
from . import config_space as space

NORM = "each pair's norm is kept (times the attention factor)"
INVERSE = "the mirror-image call undoes the rotation (M f(M f(x)) = g^2 x)"
RELATIVE = "<q, k> depends only on the positions' difference"

UNIT = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}
TINY = {"float32": 2.0 ** -126, "bfloat16": 2.0 ** -126, "float16": 2.0 ** -14}  # smallest normals
ANGLE_UNIT = 8 * 2.0 ** -24  # a float32 angle's error, per |p theta_j|, for pair 0 (pair j: 8 + j units)


def as_f64(a):
    """A tensor or array as a float64 numpy array."""
    return (a.detach().double().cpu().numpy() if hasattr(a, "detach") else np.asarray(a, dtype=np.float64))


def pair_channels(case):
    """(first, second) channels of every rotary pair in the case's layout, as slices (in pair order): a slice
    indexes without a copy."""
    r = space.rotary_dim_of(case["config"])
    if case["layout"] == "interleaved":
        return slice(0, r, 2), slice(1, r, 2)
    return slice(0, r // 2), slice(r // 2, r)


def _channels(channels, j):
    """The channel of pair j in pair_channels' slice."""
    return channels.start + j * (channels.step or 1)


_CONSTANTS = {}


def constants(case):
    """(g, theta): the attention factor and each pair's frequency, from the exact tables at positions 0 and 1
    (cos^2 + sin^2 = g^2 at 0, the angle at 1), kept per config: a case's properties and its shrunk cases read
    the same. The attention factor is the config's whatever the position (HF's); theta at length 2 is the
    largest a length-dependent method (dynamic) gives, so the angle budget built on it is the widest."""
    key = json.dumps([case["config"], case["layout"], np.asarray(case["positions"]).ndim], sort_keys=True)
    if key not in _CONSTANTS:
        a, _ = pair_channels(case)
        at = [0, 1] if np.asarray(case["positions"]).ndim == 1 else [[0, 1]] * len(case["positions"])
        cos, sin = _native.rope_cos_sin(np.asarray(at, dtype=np.int64), hf_config=case["config"], layout=case["layout"],
                                        dtype="float64")
        if len(_CONSTANTS) > 256:
            _CONSTANTS.clear()
        _CONSTANTS[key] = (float(np.hypot(cos[0, 0], sin[0, 0])), np.abs(np.arctan2(sin[1, a], cos[1, a])))
    return _CONSTANTS[key]


def constants_of(report):
    """(g, theta) from a check_rope report of the case (its plan's attention factor and frequencies), without
    another call of the reference."""
    p = report.parameters
    return float(p["attention_factor"]), np.abs(np.asarray(p["inv_freq"], dtype=np.float64))


def _layout(case):
    """pair_channels as the native loops read them: (pairs, first channel, second channel, step)."""
    a, b = pair_channels(case)
    return space.rotary_dim_of(case["config"]) // 2, a.start, b.start, a.step or 1


def _pair(v, a, b, t, h, j):
    """Pair j's norm in v at token t, head h, as the native loops compute it (norm2)."""
    return norm2(v[t, h, _channels(a, j)], v[t, h, _channels(b, j)])


def norm2(a, b):
    """sqrt(a^2 + b^2) in float64, the native loops' norm (black_box.cc: no hypot, whose cost was theirs)."""
    a, b = np.float64(a), np.float64(b)
    return float(np.sqrt(a * a + b * b))


def pair_norms(case, xd):
    """Each rotary pair's norm in xd (a float64 array), [tokens, heads, pairs]: what the three properties' budgets
    scale with, computed once for them (norm2, as _pair's)."""
    return _native._pair_norms(xd, _layout(case))


def norm_failure(case, xd, yd, consts, nx=None):
    """The first pair whose norm moved beyond the budget, in words; None when every pair holds. xd, yd: x and y as
    float64 arrays; consts: constants(case); nx: pair_norms(case, xd) where already computed."""
    a, b = pair_channels(case)
    g, u = consts[0], UNIT[case["dtype"]]
    nx = pair_norms(case, xd) if nx is None else nx
    at = _native._first_norm_off(nx, yd, _layout(case), g, 12 * u * g, 4 * TINY[case["dtype"]])
    if at is None:
        return None
    t, h, j = at
    nx, ny = _pair(xd, a, b, t, h, j), _pair(yd, a, b, t, h, j)
    return (f"token {t} head {h} pair {j} (channels {_channels(a, j)}, {_channels(b, j)}) at position "
            f"{_position(case, t)}: |y| {ny:.9g}, g |x| {g * nx:.9g} (g {g:.9g}), off by {abs(ny / (g * nx) - 1):.3g} "
            f"relative > {12 * u:.3g}")


def mirrored(case, v):
    """v with each rotary pair's second channel negated (a C-contiguous copy, in v's own type: negation is exact; a
    kernel's output may be a permuted view, and the mirrored call gives it to the kernel as x)."""
    b = pair_channels(case)[1]
    out = v.contiguous().clone() if hasattr(v, "clone") else np.array(v, order="C", copy=True)
    if hasattr(out, "neg_"):
        out[..., b].neg_()  # a view: negated where it lies
    else:
        np.negative(out[..., b], out=out[..., b])
    return out


def _copy(a):
    return a.clone() if hasattr(a, "clone") else np.array(a, copy=True)


def inverse_failure(case, xd, z, consts, nx=None):
    """z = M f(M f(x)): the first pair not back at g^2 x within the budget, in words; None when all are."""
    a, b = pair_channels(case)
    zd = as_f64(z)  # read with each pair's second channel negated (M z; negation is exact)
    g2, u = consts[0] ** 2, UNIT[case["dtype"]]
    nx = pair_norms(case, xd) if nx is None else nx
    at = _native._first_inverse_off(xd, nx, zd, _layout(case), g2, 24 * u * g2, 8 * TINY[case["dtype"]])
    if at is None:
        return None
    t, h, j = at
    ca, cb = _channels(a, j), _channels(b, j)
    za, zb = zd[t, h, ca], -zd[t, h, cb]
    off = norm2(za - g2 * xd[t, h, ca], zb - g2 * xd[t, h, cb])
    return (f"token {t} head {h} pair {j} (channels {ca}, {cb}) at position {_position(case, t)}: back at "
            f"({za:.9g}, {zb:.9g}), g^2 x = ({g2 * xd[t, h, ca]:.9g}, "
            f"{g2 * xd[t, h, cb]:.9g}): off by {off / _pair(xd, a, b, t, h, j):.3g} |x| > {24 * u:.3g} |x|")


def relative_shift(case):
    """The case's positions moved by one offset within [0, the case's max_position): down to 0 when they start
    above it, else up by at most 13 (a prefill's positions lie below 48); None where the relative property does
    not apply: fewer than two tokens, a length-dependent method, no room to move."""
    if space.rope_type_of(case["config"]) in space.LENGTH_DEPENDENT or np.asarray(case["x"]).shape[0] < 2:
        return None
    p = np.asarray(case["positions"], dtype=np.int64)
    low, high = int(p.min()), int(p.max())
    if low > 0:
        return (p - low).tolist()
    up = min(13, case.get("max_position", high + 14) - 1 - high)
    return (p + up).tolist() if up > 0 else None


def _position(case, t):
    return np.asarray(case["positions"])[..., t].tolist()


def relative_failure(case, xd, y0, y_shifted, shifted, consts, nx=None):
    """<y_s, y_t> per head and pair of tokens against the shifted call's, within the budget; None when all hold."""
    theta = consts[1]  # |theta_j| <= pi: every RoPE frequency is below 1
    p0 = np.abs(np.asarray(case["positions"], dtype=np.float64))
    p1 = np.abs(np.asarray(shifted, dtype=np.float64))
    if p0.ndim == 2:
        p0, p1 = p0.max(axis=0), p1.max(axis=0)
    # (8 + j) units per pair: a kernel that builds its frequencies by repeated products (ggml) loses about j.
    unit = (ANGLE_UNIT + np.arange(theta.size) * 2.0 ** -24)[None, :]
    d0, d1 = unit * p0[:, None] * theta[None, :], unit * p1[:, None] * theta[None, :]
    u = UNIT[case["dtype"]]
    # Every pair of tokens s < t and head: <y_s, y_t> over the rotated channels, and the budget's sums over pairs.
    nx = pair_norms(case, xd) if nx is None else nx
    found = _native._first_relative_off(nx, y0, as_f64(y_shifted), _layout(case), d0 + d1, consts[0] ** 2, 24 * u,
                                        8 * TINY[case["dtype"]])
    if found is None:
        return None
    s, t, h, dot0, dot1, budget = found
    return (f"tokens {s} and {t}, head {h}: <y_s, y_t> {dot0:.9g} at positions {_position(case, s)}, "
            f"{_position(case, t)}; {dot1:.9g} at {np.asarray(shifted)[..., s].tolist()}, "
            f"{np.asarray(shifted)[..., t].tolist()} (every position moved by one offset): off by "
            f"{abs(dot0 - dot1):.3g} > {budget:.3g}")


def failures(case, x, y, consts, call, wanted=lambda prop: True):
    """(property, failure) of each wanted property that y = fn(x) breaks, in order, lazily. call(x=...) or
    call(positions=...): fn's call with that input changed, as (output, None) or (None, what went wrong)."""
    xd, yd = as_f64(x), as_f64(y)
    nx = pair_norms(case, xd)
    if wanted(NORM) and (text := norm_failure(case, xd, yd, consts, nx)):
        yield NORM, text
    if wanted(INVERSE):
        back, error = call(x=mirrored(case, y))
        if error or (text := inverse_failure(case, xd, back, consts, nx)):
            yield INVERSE, error or text
    if wanted(RELATIVE) and (shifted := relative_shift(case)) is not None:
        moved, error = call(positions=shifted)
        if error or (text := relative_failure(case, xd, yd, moved, shifted, consts, nx)):
            yield RELATIVE, error or text


def check(fn, x, positions, config, layout="halfsplit"):
    """The three properties of fn on one input (torch tensors or numpy arrays, as verify_rope calls fn): a list of
    (property, failure) pairs, empty when all hold. The minimal case's snippet of a black-box failure calls it."""
    given = positions

    def call(x=x, positions=None):  # fn gets inputs of its own; shifted positions (a list) in the caller's type
        if positions is None:
            positions = given
        else:
            positions = given.new_tensor(positions) if hasattr(given, "new_tensor") else \
                np.asarray(positions, dtype=np.asarray(given).dtype)
        return fn(_copy(x), _copy(positions), dict(config)), None

    p = positions.detach().cpu().numpy() if hasattr(positions, "detach") else np.asarray(positions)
    case = {"config": dict(config), "layout": layout, "dtype": str(x.dtype).replace("torch.", ""), "x": as_f64(x),
            "positions": p.astype(np.int64).tolist()}
    return list(failures(case, x, call()[0], constants(case), call))

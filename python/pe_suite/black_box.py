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
            y' the call at positions shifted by one offset, d_pj = 8 * 2^-24 |p| theta_j a float32 angle's error.
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
ANGLE_UNIT = 8 * 2.0 ** -24


def _f64(a):
    return (a.detach().double().cpu().numpy() if hasattr(a, "detach") else np.asarray(a, dtype=np.float64))


def pair_channels(case):
    """(first, second) channel indices of every rotary pair in the case's layout."""
    r = space.rotary_dim_of(case["config"])
    if case["layout"] == "interleaved":
        return np.arange(0, r, 2), np.arange(1, r, 2)
    return np.arange(r // 2), np.arange(r // 2, r)


def _tables(case, positions):
    """The exact (cos, sin) [tokens, rotary_dim] in float64 at `positions` (attention factor included)."""
    return _native.rope_cos_sin(np.asarray(positions, dtype=np.int64), hf_config=case["config"],
                                layout=case["layout"], dtype="float64")


def gains(case):
    """Each token's attention factor g_t, from the exact tables: cos^2 + sin^2 = g^2 (kept for the case's next
    property: a case's three properties read the same tables)."""
    key = json.dumps([case["config"], case["positions"], case["layout"]], sort_keys=True)
    if key not in _GAINS:
        cos, sin = _tables(case, case["positions"])
        if len(_GAINS) > 64:
            _GAINS.clear()
        _GAINS[key] = np.hypot(cos[:, 0], sin[:, 0])
    return _GAINS[key]


_GAINS = {}


def _pair_norms(v, a, b):
    return np.hypot(v[..., a], v[..., b])


def norm_failure(case, x, y):
    """The first pair whose norm moved beyond the budget, in words; None when every pair holds."""
    a, b = pair_channels(case)
    xd, yd = _f64(x), _f64(y)
    g = gains(case)[:, None, None]
    nx, ny = _pair_norms(xd, a, b), _pair_norms(yd, a, b)
    u = UNIT[case["dtype"]]
    bad = ~(np.abs(ny - g * nx) <= 12 * u * g * nx + 4 * TINY[case["dtype"]])
    if not bad.any():
        return None
    t, h, j = np.argwhere(bad)[0]
    return (f"token {t} head {h} pair {j} (channels {a[j]}, {b[j]}) at position {_position(case, t)}: |y| "
            f"{ny[t, h, j]:.9g}, g |x| {g[t, 0, 0] * nx[t, h, j]:.9g} (g {g[t, 0, 0]:.9g}), off by "
            f"{abs(ny[t, h, j] / (g[t, 0, 0] * nx[t, h, j]) - 1):.3g} relative > {12 * u:.3g}")


def mirrored(case, v):
    """v with each rotary pair's second channel negated (a copy, in v's own type: negation is exact)."""
    _, b = pair_channels(case)
    out = v.clone() if hasattr(v, "clone") else np.array(v, copy=True)
    out[..., b] = -out[..., b]
    return out


def inverse_failure(case, x, z):
    """z = M f(M f(x)): the first pair not back at g^2 x within the budget, in words; None when all are."""
    a, b = pair_channels(case)
    xd, zd = _f64(x), _f64(mirrored(case, z))
    g2 = (gains(case) ** 2)[:, None, None]
    nx = _pair_norms(xd, a, b)
    off = np.hypot(zd[..., a] - g2 * xd[..., a], zd[..., b] - g2 * xd[..., b])
    u = UNIT[case["dtype"]]
    bad = ~(off <= 24 * u * g2 * nx + 8 * TINY[case["dtype"]])
    if not bad.any():
        return None
    t, h, j = np.argwhere(bad)[0]
    return (f"token {t} head {h} pair {j} (channels {a[j]}, {b[j]}) at position {_position(case, t)}: back at "
            f"({zd[t, h, a[j]]:.9g}, {zd[t, h, b[j]]:.9g}), g^2 x = ({g2[t, 0, 0] * xd[t, h, a[j]]:.9g}, "
            f"{g2[t, 0, 0] * xd[t, h, b[j]]:.9g}): off by {off[t, h, j] / nx[t, h, j]:.3g} |x| > {24 * u:.3g} |x|")


def relative_applies(case):
    s = case["config"].get("rope_scaling") or {}
    kind = s.get("rope_type", s.get("type", "default"))
    return kind not in ("dynamic", "longrope") and np.asarray(case["x"]).shape[0] >= 2


def shifted_positions(case):
    """The case's positions moved by one offset, staying within what was drawn: down to 0 when they start above
    it, else up by 13 (a prefill's positions lie below 48)."""
    p = np.asarray(case["positions"], dtype=np.int64)
    low = int(p.min())
    return (p - low if low > 0 else p + 13).tolist()


def _position(case, t):
    p = np.asarray(case["positions"])
    return p[..., t].tolist()


def relative_failure(case, x, y, y_shifted, shifted):
    """<y_s, y_t> per head and pair of tokens against the shifted call's, within the budget; None when all hold."""
    a, b = pair_channels(case)
    xd, y0, y1 = _f64(x), _f64(y), _f64(y_shifted)
    axes = np.asarray(case["positions"]).ndim
    cos, sin = _tables(case, [0, 1] if axes == 1 else [[0, 1]] * len(case["positions"]))
    theta = np.abs(np.arctan2(sin[1, a], cos[1, a]))  # |theta_j| <= pi: every RoPE frequency is below 1
    g = gains(case)
    p0 = np.abs(np.asarray(case["positions"], dtype=np.float64))
    p1 = np.abs(np.asarray(shifted, dtype=np.float64))
    if p0.ndim == 2:
        p0, p1 = p0.max(axis=0), p1.max(axis=0)
    d0, d1 = ANGLE_UNIT * p0[:, None] * theta[None, :], ANGLE_UNIT * p1[:, None] * theta[None, :]
    nx = _pair_norms(xd, a, b)  # [T, H, pairs]
    u = UNIT[case["dtype"]]
    tokens = xd.shape[0]
    for s in range(tokens):
        for t in range(s + 1, tokens):
            dot0 = (y0[s][:, a] * y0[t][:, a] + y0[s][:, b] * y0[t][:, b]).sum(axis=1)  # per head
            dot1 = (y1[s][:, a] * y1[t][:, a] + y1[s][:, b] * y1[t][:, b]).sum(axis=1)
            weight = nx[s] * nx[t] * g[s] * g[t]  # [H, pairs]
            budget = (weight * (24 * u + 2 * (d0[s] + d0[t] + d1[s] + d1[t]))).sum(axis=1) + 8 * TINY[case["dtype"]]
            bad = ~(np.abs(dot0 - dot1) <= budget)
            if bad.any():
                h = int(np.argwhere(bad)[0][0])
                return (f"tokens {s} and {t}, head {h}: <y_s, y_t> {dot0[h]:.9g} at positions {_position(case, s)}, "
                        f"{_position(case, t)}; {dot1[h]:.9g} at {np.asarray(shifted)[..., s].tolist()}, "
                        f"{np.asarray(shifted)[..., t].tolist()} (every position moved by one offset): off by "
                        f"{abs(dot0[h] - dot1[h]):.3g} > {budget[h]:.3g}")
    return None


def check(fn, x, positions, config, layout="halfsplit"):
    """The three properties of fn on one input (torch tensors or numpy arrays, as verify_rope calls fn): a list of
    (property, failure) pairs, empty when all hold. The minimal case's snippet of a black-box failure calls it."""
    def call(v, p):
        v = v.clone() if hasattr(v, "clone") else np.array(v, copy=True)
        p = p.clone() if hasattr(p, "clone") else np.array(p, copy=True)
        return fn(v, p, dict(config))

    dtype = str(x.dtype).replace("torch.", "")
    case = {"config": dict(config), "layout": layout, "dtype": dtype, "x": _f64(x),
            "positions": np.asarray(_f64(positions), dtype=np.int64).tolist()}
    y = call(x, positions)
    out = []
    if (f := norm_failure(case, x, y)) is not None:
        out.append((NORM, f))
    if (f := inverse_failure(case, x, call(mirrored(case, y), positions))) is not None:
        out.append((INVERSE, f))
    if relative_applies(case):
        shifted = shifted_positions(case)
        moved = type(positions)(shifted) if not hasattr(positions, "clone") else \
            positions.new_tensor(shifted)
        moved = np.asarray(shifted, dtype=np.int64) if isinstance(positions, np.ndarray) else moved
        if (f := relative_failure(case, x, y, call(x, moved), shifted)) is not None:
            out.append((RELATIVE, f))
    return out

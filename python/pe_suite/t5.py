"""T5's relative position buckets (issue 51, item 5), exact, and a check of an engine's buckets or bias.

T5 (HF `T5Attention._relative_position_bucket`, mT5, LongT5, UMT5, Pix2Struct, the bias of Switch and many
encoders after them) maps a key's offset from its query, n = key − query, to one of `num_buckets`:

    bidirectional: half the buckets per sign (buckets for n > 0 from num_buckets // 2 on), d = |n|
    causal:        d = max(−n, 0) (keys after the query share bucket 0)
    max_exact = buckets // 2:  d < max_exact -> d;  else max_exact + floor(t), at most buckets − 1, with
    t = (buckets − max_exact) · ln(d / max_exact) / ln(max_distance / max_exact)

Engines evaluate t in float32 (torch's `log` of `d.float() / max_exact`, divided by the double
`math.log(max_distance / max_exact)` rounded to float32, times the bucket count). The exact bucket is decided here
in integers: floor(t) >= k exactly when d^(B−E) · E^k >= D^k · E^(B−E) (B buckets, E max_exact, D max_distance;
D/E need not be an integer). Where t lies within float32's error of an integer k — the error bound below is
ε = 8·2^-24·(t + 1): the division by max_exact, log within 2 ulp, the constant's rounding, the quotient and the
product — an engine's float32 may give k − 1 or k: both are accepted there, and the check lists those offsets.
They are where t is an integer, d = E·(D/E)^(k/(B−E)): at T5's defaults (32 buckets bidirectional, 128) d = 16,
32 and 64 (t = 2, 4, 6), where torch's float32 gives the exact bucket (python/tests/test_t5.py pins HF's function
equal to the exact buckets over every offset up to 2·max_distance for 5 bucket counts x 5 distances) and a log one
ulp low would give the one below."""
import math

import numpy as np

from ._verdict import Verdict, closing

EPSILON = 8 * 2.0 ** -24


def _large(d, max_exact, buckets, max_distance):
    """max_exact + floor(t) for d >= max_exact, exactly (integers), and whether float32 may give one more or one
    less: (bucket, alternative or None)."""
    e, b = max_exact, buckets - max_exact
    k = 0
    while k < b and d ** b * e ** (k + 1) >= max_distance ** (k + 1) * e ** b:
        k += 1
    t = b * math.log(d / e) / math.log(max_distance / e)  # for the ε test only: the decision above is exact
    reach = EPSILON * (t + 1)
    alternative = None
    if k < b and (k + 1) - t <= reach:
        alternative = e + k + 1
    elif k > 0 and t - k <= reach:
        alternative = e + k - 1
    cap = buckets - 1
    return min(e + k, cap), (None if alternative is None or min(alternative, cap) == min(e + k, cap)
                             else min(alternative, cap))


def _validate(num_buckets, max_distance):
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 2:
        raise ValueError(f"num_buckets: expected an integer >= 2, got {num_buckets!r}")
    if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)) or max_distance < 1:
        raise ValueError(f"max_distance: expected an integer >= 1, got {max_distance!r}")


def buckets(relative_position, bidirectional=True, num_buckets=32, max_distance=128, alternatives=False):
    """The exact bucket of each n = key − query (an integer array); with alternatives=True also the array of the
    bucket float32 may give instead (-1 where it cannot differ)."""
    _validate(num_buckets, max_distance)
    n = np.asarray(relative_position, dtype=np.int64)
    nb, base = int(num_buckets), np.zeros(n.shape, dtype=np.int64)
    if bidirectional:
        nb //= 2
        base = np.where(n > 0, nb, 0)
        d = np.abs(n)
    else:
        d = np.maximum(-n, 0)
    max_exact = nb // 2
    if max_exact == 0 or max_distance <= max_exact:  # HF's log of a ratio <= 1: not a T5 configuration
        raise ValueError(f"max_distance: {max_distance} must exceed max_exact {max_exact} (a quarter of "
                         f"num_buckets {num_buckets} bidirectional, half of it causal)")
    out, alt = np.empty(n.shape, dtype=np.int64), np.full(n.shape, -1, dtype=np.int64)
    for v in np.unique(d):
        at = d == v
        if v < max_exact:
            out[at] = v
            continue
        bucket, other = _large(int(v), max_exact, nb, int(max_distance))
        out[at] = bucket
        if other is not None:
            alt[at] = other
    out += base
    alt = np.where(alt >= 0, alt + base, -1)
    return (out, alt) if alternatives else out


class T5Report(Verdict):
    """check_t5's verdict: `.passed`, the elements that differ (`.wrong`: count and the first ones), the distances
    where float32 may go either way (`.boundaries`), what a failing array fits (`.diagnosis`), and the text."""

    def __init__(self, passed, wrong, first, boundaries, diagnosis, text):
        self.passed, self.wrong, self.first = passed, wrong, first
        self.boundaries, self.diagnosis, self.text = boundaries, diagnosis, text


def _as_numpy(a, name):
    if hasattr(a, "detach"):
        t = a.detach().cpu()
        return (t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy()
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array or a torch tensor, got {type(a).__name__}")
    return a


def _expected(n, table, bidirectional, num_buckets, max_distance):
    """(the exact array: bucket indices [Q, K], or the bias [heads, Q, K] gathered from table [buckets, heads];
    the float32 alternative's array, the exact one's where there is none; where there is one)."""
    b, alt = buckets(n, bidirectional, num_buckets, max_distance, alternatives=True)
    has = alt >= 0
    if table is None:
        return b, np.where(has, alt, b), has
    if table.shape[0] != num_buckets:
        raise ValueError(f"table: expected [num_buckets, heads] with num_buckets {num_buckets}, got {table.shape}")
    exact = np.moveaxis(table[b], -1, 0)
    other = np.moveaxis(table[np.where(has, alt, b)], -1, 0)
    return exact, other, np.broadcast_to(has, exact.shape)


def _matches(data, exact, other, has):
    """Each element is the exact one's, or the float32 alternative's where there is one (a bias compared bit for
    bit in the data's type)."""
    if np.issubdtype(exact.dtype, np.integer):
        return (data == exact) | (has & (data == other))
    bits = lambda a: np.ascontiguousarray(a).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])
    return (bits(data) == bits(exact.astype(data.dtype))) | (has & (bits(data) == bits(other.astype(data.dtype))))


def _diagnose(data, n, table, bidirectional, num_buckets, max_distance):
    """The candidate settings (T5's mistakes) that reproduce the data exactly, in words."""
    candidates = [("the causal flag inverted (bidirectional={})".format(not bidirectional),
                   (n, not bidirectional, num_buckets, max_distance)),
                  ("the offset taken as query − key (its sign flipped)", (-n, bidirectional, num_buckets, max_distance))]
    for nb in sorted({num_buckets // 2, num_buckets * 2, 32, 64, 128} - {num_buckets}):
        if table is None or nb <= table.shape[0]:
            candidates.append((f"num_buckets {nb} (given: {num_buckets})", (n, bidirectional, nb, max_distance)))
    for md in sorted({max_distance // 2, max_distance * 2, 128, 256} - {max_distance}):
        candidates.append((f"max_distance {md} (given: {max_distance})", (n, bidirectional, num_buckets, md)))
    fits = []
    for words, (m, bi, nb, md) in candidates:
        try:
            t = table[:nb] if table is not None else None
            exact, other, has = _expected(m, t, bi, nb, md)
        except ValueError:
            continue
        if exact.shape == data.shape and _matches(data, exact, other, has).all():
            fits.append(words)
    return fits


def check_t5(data, queries, keys, *, bidirectional=True, num_buckets=32, max_distance=128, table=None):
    """Check T5's relative position buckets: `data` the bucket indices [queries, keys] (table None), or the bias
    [heads, queries, keys] an engine built from the learned `table` [num_buckets, heads] (HF's
    `relative_attention_bias.weight`); queries, keys: their positions. Every element must be the exact bucket's (its
    table entry's bits), or float32's other bucket where t lies within float32's error of a boundary. Returns a
    T5Report whose diagnosis names the mistake a failing array fits (the causal flag inverted, the offset's sign,
    num_buckets, max_distance), or says none fits."""
    _validate(num_buckets, max_distance)
    data = _as_numpy(data, "data")
    table = None if table is None else _as_numpy(table, "table")
    q, k = np.asarray(queries, dtype=np.int64).ravel(), np.asarray(keys, dtype=np.int64).ravel()
    n = k[None, :] - q[:, None]
    exact, other, has = _expected(n, table, bidirectional, num_buckets, max_distance)
    if data.shape != exact.shape:
        raise ValueError(f"data: expected shape {exact.shape} ({'heads, ' if table is not None else ''}queries, keys), "
                         f"got {data.shape}")
    ok = _matches(data, exact, other, has)
    wrong = int((~ok).sum())
    first = [dict(zip(("head", "query", "key") if data.ndim == 3 else ("query", "key"), map(int, w)))
             for w in np.argwhere(~ok)[:8]]
    boundaries = sorted({int(v) for v in n[has[0] if has.ndim == 3 else has]})  # _expected's, not computed again
    lines = [f"T5 buckets: {'bidirectional' if bidirectional else 'causal'}, num_buckets {num_buckets}, "
             f"max_distance {max_distance}; {len(q)} queries x {len(k)} keys"
             f"{', bias from a table of ' + str(table.shape[1]) + ' heads' if table is not None else ''}",
             f"float32 boundaries: {len(boundaries)} offset(s) where t lies within float32's error of a bucket "
             f"boundary (either bucket accepted){': ' + str(boundaries[:8]) if boundaries else ''}"]
    diagnosis = []
    if wrong:
        lines.append(f"{wrong} of {data.size} elements differ from the exact buckets; first: {first[0]}")
        diagnosis = _diagnose(data, n, table, bidirectional, num_buckets, max_distance)
    text = closing(lines, wrong, diagnosis, "none of T5's known mistakes reproduces the data")
    return T5Report(not wrong, wrong, first, boundaries, diagnosis, text)

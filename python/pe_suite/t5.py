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
ε = 2^-24·(8·(t + 1) + 4·(B−E)/ln(D/E)): log within 2 ulp, the constant's rounding, the quotient and the product,
and the log argument's rounding (float(d), the division by max_exact or CUDA's multiply by its reciprocal) moved
through ln — an engine's float32 may give k − 1 or k: both are accepted there, and the check lists those offsets.
They are where t is an integer, d = E·(D/E)^(k/(B−E)): at T5's defaults (32 buckets bidirectional, 128) d = 16,
32 and 64 (t = 2, 4, 6), where torch's float32 gives the exact bucket (python/tests/test_t5.py pins HF's function
equal to the exact buckets over every offset up to 2·max_distance for 5 bucket counts x 5 distances) and a log one
ulp low would give the one below.

The buckets and the check are the engine's (pe/ref/t5.h, pe/check/t5.h; also `pe-suite check --family t5`); this
module reads torch tensors and numpy arrays and keeps the Python signatures."""
import numpy as np

from . import _native
from ._keywords import checked
from ._verdict import Verdict

_t5_buckets = checked(_native._t5_buckets)
_check_t5 = checked(_native._check_t5)


def _validate(num_buckets, max_distance):
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 2:
        raise ValueError(f"num_buckets: expected an integer >= 2, got {num_buckets!r}")
    if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)) or max_distance < 1:
        raise ValueError(f"max_distance: expected an integer >= 1, got {max_distance!r}")


def buckets(relative_position, bidirectional=True, num_buckets=32, max_distance=128, alternatives=False):
    """The exact bucket of each n = key − query (an integer array); with alternatives=True also the array of the
    bucket float32 may give instead (-1 where it cannot differ)."""
    _validate(num_buckets, max_distance)
    b, alt = _t5_buckets(np.asarray(relative_position, dtype=np.int64), bool(bidirectional), int(num_buckets),
                         int(max_distance))
    return (b, alt) if alternatives else b


class T5Report(Verdict):
    """check_t5's verdict: `.passed`, the elements that differ (`.wrong`: count and `.first`, the first one), the
    offsets where float32 may go either way (`.boundaries`), what a failing array fits (`.diagnosis`), `.report` (the
    engine's Report), and the text."""

    def __init__(self, report):
        doc = report.to_dict()
        self.report, self.passed, self.wrong, self.text = report, report.passed, doc["violations"], report.text
        worst = (doc.get("worst") or [None])[0]
        keys = ("head", "query", "key") if "bias from a table" in report.text else ("query", "key")
        self.first = [{k: worst[k] for k in keys}] if worst else []
        self.boundaries = doc["parameters"]["boundaries"]
        self.diagnosis = [e["fits"] for e in doc.get("explanations") or []]


def _as_numpy(a, name):
    if hasattr(a, "detach"):
        t = a.detach().cpu()
        return (t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy()
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array or a torch tensor, got {type(a).__name__}")
    return a


def check_t5(data, queries, keys, *, bidirectional=True, num_buckets=32, max_distance=128, table=None):
    """Check T5's relative position buckets: `data` the bucket indices [queries, keys] (table None), or the bias
    [heads, queries, keys] (or HF compute_bias's [1, heads, queries, keys]) an engine built from the learned `table`
    [num_buckets, heads] (HF's
    `relative_attention_bias.weight`); queries, keys: their positions. Every element must be the exact bucket's (its
    table entry's bits), or float32's other bucket where t lies within float32's error of a boundary. Returns a
    T5Report whose diagnosis names the mistake a failing array fits (the causal flag inverted, the offset's sign,
    num_buckets, max_distance), or says none fits."""
    _validate(num_buckets, max_distance)
    data = _as_numpy(data, "data")
    table = None if table is None else _as_numpy(table, "table")
    if data.ndim == 4 and data.shape[0] == 1 and table is not None:  # HF's compute_bias: [1, heads, queries, keys]
        data = data[0]
    integers = np.issubdtype(data.dtype, np.integer)
    if table is None and not integers:
        raise ValueError(f"data: bucket indices are integers (got {data.dtype}); a bias needs its table")
    if table is not None and integers:
        raise ValueError(f"data: a bias gathered from `table` holds its values, not integers ({data.dtype}); bucket "
                         f"indices are checked without a table")
    q, k = np.asarray(queries, dtype=np.int64).ravel(), np.asarray(keys, dtype=np.int64).ravel()
    return T5Report(_check_t5(np.ascontiguousarray(data), q, k, bidirectional=bool(bidirectional),
                              num_buckets=int(num_buckets), max_distance=int(max_distance),
                              table=None if table is None else np.ascontiguousarray(table), integers=integers))

"""verify_rope: property-based verification of a RoPE callable where it lives (PyTorch, or numpy; CUDA and
Triton kernels through the caller's own wrapper), against the exact reference.

fn(x, positions, config) -> y is called on drawn cases: x [tokens, heads, head_dim] in a drawn dtype,
positions [tokens] (M-RoPE: [3, tokens]), config the HF dict the engine reads (rope_theta, head_dim,
partial_rotary_factor, rope_scaling of every rope_type...). Each case is checked for: agreement with the exact
reference under the data's precision class (check_rope's default budget: what every formulation engines use
achieves, so a correct kernel passes in bf16 too); pass-through channels bit for bit; the same bits from the
same call twice; and the same agreement for a row called alone and for the case split into a prefill and
decode steps, call by call (bits may differ from the whole call's: PyTorch's own vectorised cos rounds a
tail apart from the body; a cache that a later call outgrows does not pass). A failure is shrunk (dtype, heads, tokens, positions, head_dim, config, values) to the
smallest case that still fails the same property, and raised as an AssertionError with the property, the
minimal case as a runnable snippet and the check engine's diagnosis of the kernel's output. Failures are
kept in a file and replayed first on the next run."""
import json
import os
import pathlib
import random

import numpy as np

from . import _native
from . import config_space as space

DEFAULT_SEED = 20261130
DEFAULT_FAILURE_FILE = ".pe_suite/failures.json"
AGREES = "agrees with the exact reference within the data's precision class"
PASS_THROUGH = "pass-through channels keep their bits"
DETERMINISTIC = "the same call gives the same bits twice"
ROW_ALONE = "a row called alone agrees with the exact reference too"
PREFILL_DECODE = "a prefill then decode steps agree with the exact reference, call by call"
RAISED = "returns an output of x's shape and dtype"


class VerifyError(AssertionError):
    """verify_rope's failure: .property, .case (the minimal case, JSON-able), .diagnosis (its claims)."""

    def __init__(self, text, prop, case, diagnosis):
        super().__init__(text)
        self.property, self.case, self.diagnosis = prop, case, diagnosis


def _torch():
    import torch
    return torch


def _kind(config):
    s = config.get("rope_scaling") or {}
    return s.get("rope_type", s.get("type", "default")) if s.get("type") != "mrope" else "default"


# -- cases ----------------------------------------------------------------------------------------------------

def _representable(values, dtype):
    """float64 values rounded to dtype (RNE), so the stored case is exactly what the kernel was given."""
    if dtype == "float32":
        return values.astype(np.float32).astype(np.float64)
    if dtype == "float16":
        return values.astype(np.float16).astype(np.float64)
    torch = _torch()
    return torch.from_numpy(values).to(torch.bfloat16).to(torch.float64).numpy()


def draw_case(rng, *, rope_types, forms, dtypes, layout, scenarios, max_position):
    config, form = space.draw_config(rng, rope_types, forms)
    scenario = rng.choice(scenarios)
    tokens = rng.randint(1, 4) if scenario == "decode" else rng.randint(1, 48)
    heads = rng.randint(1, 8)
    positions = space.draw_positions(rng, scenario, tokens, max_position)
    if form == "mrope":  # text tokens have t = h = w; an image's patches sit a few rows and columns back
        positions = [positions, [max(0, p - rng.randint(0, 3)) for p in positions],
                     [max(0, p - rng.randint(0, 5)) for p in positions]]
    dtype = rng.choice(dtypes)
    np_rng = np.random.default_rng(rng.getrandbits(63))
    scale = 2.0 ** rng.randint(-2, 4)
    x = _representable(np_rng.standard_normal((tokens, heads, config["head_dim"])) * scale, dtype)
    return {"config": config, "form": form, "scenario": scenario, "layout": layout, "dtype": dtype,
            "positions": positions, "x": x}


def _portable(case):
    """The case as JSON (the failure file, VerifyError.case): x as nested lists."""
    return dict(case, x=np.asarray(case["x"]).tolist())


def _from_portable(case):
    return dict(case, x=np.asarray(case["x"], dtype=np.float64))


def _shape(case):
    x = np.asarray(case["x"])
    return x.shape


# -- calling fn -----------------------------------------------------------------------------------------------

class _Caller:
    def __init__(self, fn, array):
        self.fn, self.array = fn, array

    def inputs(self, case, rows=None):
        x = np.asarray(case["x"], dtype=np.float64)
        positions = np.asarray(case["positions"], dtype=np.int64)
        if rows is not None:
            x = x[rows]
            positions = positions[..., rows]
        if self.array == "torch":
            torch = _torch()
            dt = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[case["dtype"]]
            return torch.from_numpy(x).to(dt), torch.from_numpy(positions)
        return x.astype(case["dtype"]), positions

    def call(self, case, rows=None):
        """(x given, y as a CPU tensor or array, None) or (x, None, the failure's text)."""
        x, positions = self.inputs(case, rows)
        config = json.loads(json.dumps(case["config"]))  # fn may not change the case
        try:
            y = self.fn(x, positions, config)
        except Exception as e:  # noqa: BLE001 -- the kernel's own error is the finding
            return x, None, f"fn raised {type(e).__name__}: {e}"
        if hasattr(y, "detach"):
            y = y.detach().cpu()
            if tuple(y.shape) != tuple(x.shape) or y.dtype != x.dtype:
                return x, None, f"fn returned shape {tuple(y.shape)} {y.dtype}, want {tuple(x.shape)} {x.dtype}"
        else:
            y = np.asarray(y)
            if y.shape != x.shape or y.dtype != x.dtype:
                return x, None, f"fn returned shape {y.shape} {y.dtype}, want {x.shape} {x.dtype}"
        return x, y, None


def _bits(a):
    if hasattr(a, "detach"):
        torch = _torch()
        a = a.contiguous()
        return a.view(torch.int16 if a.element_size() == 2 else torch.int32).numpy()
    return np.ascontiguousarray(a).view(np.int16 if a.itemsize == 2 else np.int32)


def _check(case, x, y):
    return _native.check_rope(x, y, np.asarray(case["positions"], dtype=np.int64), hf_config=case["config"],
                              layout=case["layout"])


# -- the properties -------------------------------------------------------------------------------------------

def _worst_text(report):
    w = report.worst[0] if report.worst else None
    if not w:
        return str(report).strip().splitlines()[-1]
    return (f"token {w['row']} head {w['head']} channel {w['channel']} at position {w['position']}: got "
            f"{w['value']!r}, exact {w['exact']!r}, error {w['abs_error']:.3g} > budget {w['budget']:.3g}")


def _failure(caller, case, only=None):
    """(property, text, report) of the first property the case breaks, else None."""
    def wanted(p):
        return only is None or only == p

    x, y, error = caller.call(case)
    if error:
        return RAISED, error, None
    rotary = space.rotary_dim_of(case["config"])
    if wanted(PASS_THROUGH) and rotary < case["config"]["head_dim"]:
        bx, by = _bits(x)[..., rotary:], _bits(y)[..., rotary:]
        if not np.array_equal(bx, by):
            t, h, c = np.argwhere(bx != by)[0]
            return PASS_THROUGH, (f"token {t} head {h} channel {rotary + c} (a pass-through channel: rotary_dim "
                                  f"{rotary} of head_dim {case['config']['head_dim']}) changed"), None
    if wanted(AGREES):
        report = _check(case, x, y)
        if not report.passed:
            text = _worst_text(report)
            return AGREES, text, report
    if wanted(DETERMINISTIC):
        _, y2, error = caller.call(case)
        if error or not np.array_equal(_bits(y), _bits(y2)):
            return DETERMINISTIC, error or "a second call gave other bits", None
    # A part of the batch called alone (a row; a prefill, then decode steps) agrees with the exact reference
    # too: its bits may differ from the whole call's (PyTorch's vectorised cos and sin round a tail element
    # apart from the body), but never beyond the budget; under dynamic and LongRoPE each call has its own
    # seq_len, as HF computes it.
    tokens = _shape(case)[0]
    if tokens < 2:
        return None
    parts = []
    if wanted(ROW_ALONE):
        parts.append((ROW_ALONE, [slice(tokens // 2, tokens // 2 + 1)], f"token {tokens // 2} called alone"))
    if wanted(PREFILL_DECODE):
        split = max(1, tokens - 2)
        parts.append((PREFILL_DECODE, [slice(0, split)] + [slice(k, k + 1) for k in range(split, tokens)],
                      f"tokens 0..{split - 1} as a prefill, then {tokens - split} decode step(s)"))
    for prop, pieces, what in parts:
        for rows in pieces:
            sub = _rows(case, rows)
            xs, ys, error = caller.call(sub)
            if error:
                return prop, f"{what}: {error}", None
            report = _check(sub, xs, ys)
            if not report.passed:
                return prop, f"{what}: {_worst_text(report)} (the call of rows {rows.start}..{rows.stop - 1})", report
    return None


# -- shrinking ------------------------------------------------------------------------------------------------

def _with(case, **changes):
    """A copy of the case with some fields replaced (x, a float64 array, is never written in place)."""
    c = dict(case, config=json.loads(json.dumps(case["config"])), positions=json.loads(json.dumps(case["positions"])))
    c.update(changes)
    return c


def _rows(case, rows):
    x = np.asarray(case["x"])[rows]
    p = np.asarray(case["positions"])[..., rows]
    return _with(case, x=x, positions=p.tolist())


def _head_dim(case, d):
    """The case at head_dim d: x's first d channels, the config's lists and sections fitted to it."""
    config = json.loads(json.dumps(case["config"]))
    config["head_dim"] = d
    config.pop("hidden_size", None), config.pop("num_attention_heads", None)
    f = config.get("partial_rotary_factor")
    if f is not None and not (int(d * f) % 2 == 0 and 2 <= int(d * f) < d):
        return None
    rotary = space.rotary_dim_of(config)
    s = config.get("rope_scaling")
    if isinstance(s, dict):
        for key in ("short_factor", "long_factor"):
            if key in s:
                s[key] = s[key][: rotary // 2]
        if "mrope_section" in s:
            pairs = rotary // 2
            if pairs < 3:
                return None
            t = max(1, min(s["mrope_section"][0], pairs - 2))
            h = max(1, min(s["mrope_section"][1], pairs - t - 1))
            s["mrope_section"] = [t, h, pairs - t - h]
    if not space.valid(config):
        return None
    return _with(case, config=config, x=np.asarray(case["x"])[..., :d])


def _candidates(case):
    """Smaller cases, most reducing first."""
    x = np.asarray(case["x"])
    tokens, heads, d = x.shape
    if case["dtype"] != "float32":
        yield _with(case, dtype="float32")
    if heads > 1:
        yield _with(case, x=x[:, :1])
    if tokens > 1:
        for t in range(min(tokens, 8)):
            yield _rows(case, slice(t, t + 1))
        yield _rows(case, slice(0, tokens // 2))
        yield _rows(case, slice(tokens // 2, tokens))
        if tokens <= 16:
            for t in range(tokens):
                yield _rows(case, [k for k in range(tokens) if k != t])
    for smaller in range(2, d, 2):
        c = _head_dim(case, smaller)
        if c is not None:
            yield c
    positions = np.asarray(case["positions"])
    for k in range(positions.shape[-1]):
        for value in (0, 1):
            if positions[..., k].max() > value:
                p = positions.copy()
                p[..., k] = value
                yield _with(case, positions=p.tolist())
    if positions.size and positions.max() > 1:
        yield _with(case, positions=(positions // 2).tolist())
        yield _with(case, positions=(positions - positions.min()).tolist())
    config = case["config"]
    if config.get("rope_theta") != 10000.0:  # a theta of its own is kept only when the failure needs it
        yield _with(case, config=dict(config, rope_theta=10000.0))
    s = config.get("rope_scaling")
    if isinstance(s, dict):
        for key in ("attention_factor", "beta_fast", "beta_slow"):
            if key in s:
                yield _with(case, config=dict(config, rope_scaling={k: v for k, v in s.items() if k != key}))
        if "factor" in s and s["factor"] != round(s["factor"]) and round(s["factor"]) > 1:
            yield _with(case, config=dict(config, rope_scaling=dict(s, factor=float(round(s["factor"])))))
    if not np.all(x == 1.0):
        yield _with(case, x=np.full_like(x, 1.0))


def _shrink(caller, case, prop, budget=600):
    steps = 0
    progress = True
    while progress and budget > 0:
        progress = False
        for candidate in _candidates(case):
            budget -= 1
            if budget <= 0:
                break
            found = _failure(caller, candidate, only=prop)
            if found and found[0] == prop:
                case, steps, progress = candidate, steps + 1, True
                break
    return case, steps


# -- the report -----------------------------------------------------------------------------------------------

def _snippet(case, array):
    x = np.asarray(case["x"])
    values = ", ".join(repr(float(v)) for v in x.reshape(-1))
    if array == "torch":
        dt = {"float32": "torch.float32", "bfloat16": "torch.bfloat16", "float16": "torch.float16"}[case["dtype"]]
        head = "import torch\n"
        xs = f"x = torch.tensor([{values}], dtype=torch.float64).to({dt}).reshape{x.shape}"
        ps = f"positions = torch.tensor({case['positions']})"
    else:
        head = "import numpy as np\n"
        xs = f"x = np.array([{values}]).astype(np.{case['dtype']}).reshape{x.shape}"
        ps = f"positions = np.array({case['positions']})"
    return (f"{head}import pe_suite\nconfig = {json.dumps(case['config'])}\n{ps}\n{xs}\n"
            f"y = fn(x, positions, config)\n"
            f"print(pe_suite.check_rope(x, y, positions, hf_config=config, layout={case['layout']!r}))")


def _diagnosis(caller, case):
    """The check engine's claims about the kernel's output for this case: (lines, list of claims)."""
    x, y, error = caller.call(case)
    if error or y is None:
        return [], []
    report = _check(case, x, y)
    claims = [f"the data fits: {e['fits']} ({e['support']})" for e in report.explanations]
    return claims, report.explanations


def _describe(case):
    x = np.asarray(case["x"])
    s = case["config"].get("rope_scaling") or {}
    rotary = space.rotary_dim_of(case["config"])
    partial = f" (rotary_dim {rotary})" if rotary < case["config"]["head_dim"] else ""
    return (f"{case['dtype']}, {case['layout']}, rope_type {_kind(case['config'])}, head_dim "
            f"{case['config']['head_dim']}{partial}, "
            f"{x.shape[0]} token(s) x {x.shape[1]} head(s), scenario "
            f"{case['scenario']}{', M-RoPE ' + str(s['mrope_section']) if 'mrope_section' in s else ''}")


# -- the entry point ------------------------------------------------------------------------------------------

def verify_rope(fn, *, examples=100, seed=None, dtypes=("float32", "bfloat16"), layout="halfsplit",
                rope_types=space.ROPE_TYPES, forms=("text",), scenarios=space.SCENARIOS, max_position=1 << 21,
                array="torch", failure_file=DEFAULT_FAILURE_FILE):
    """Drives fn(x, positions, config) -> y through `examples` drawn cases; raises VerifyError (an
    AssertionError) with the smallest failing case and its diagnosis, else returns a summary dict.

    dtypes: of x and y ("float32", "bfloat16", "float16"); layout: "halfsplit" (HF's rotate_half) or
    "interleaved" (GPT-J); rope_types: HF's rope_type values drawn; forms: "text", "partial"
    (partial_rotary_factor) and "mrope" (rope_scaling.mrope_section, positions [3, tokens]); scenarios:
    "prefill", "decode", "chunked", "packed", "left_padding"; max_position: the largest decode offset;
    array: "torch" (tensors) or "numpy"; seed: the draw (default 20261130, or $PE_SUITE_SEED); failure_file:
    where failures are kept and replayed first (None: nowhere)."""
    for name, given, known in (("dtypes", dtypes, space.DTYPES), ("rope_types", rope_types, space.ROPE_TYPES),
                               ("forms", forms, space.FORMS), ("scenarios", scenarios, space.SCENARIOS)):
        if isinstance(given, str) or not given or any(g not in known for g in given):
            raise ValueError(f"{name}: expected a non-empty list of {', '.join(known)}; got {given!r}")
    if layout not in space.LAYOUTS:
        raise ValueError(f"layout: expected one of {', '.join(space.LAYOUTS)}; got {layout!r}")
    if array not in ("torch", "numpy"):
        raise ValueError(f"array: expected 'torch' or 'numpy'; got {array!r}")
    if array == "numpy" and "bfloat16" in dtypes:
        raise ValueError("dtypes: numpy has no bfloat16; use array='torch' or drop 'bfloat16'")
    if not isinstance(examples, int) or examples < 1:
        raise ValueError(f"examples: expected a positive integer; got {examples!r}")
    if not isinstance(max_position, int) or max_position < 64:
        raise ValueError(f"max_position: expected an integer >= 64; got {max_position!r}")
    if seed is None:
        seed = int(os.environ.get("PE_SUITE_SEED", DEFAULT_SEED))
    caller = _Caller(fn, array)
    key = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}/{layout}/{array}"
    store = _Store(failure_file)

    for kept in store.cases(key):  # the last run's failures first
        case = _from_portable(kept)
        found = _failure(caller, case)
        if found:
            _raise(caller, case, found, case, 0, f"replayed from {failure_file}", array, store, key, max_position)
        store.forget(key, kept)

    counts = {}
    for i in range(examples):
        case = draw_case(random.Random(f"{seed}:{i}"), rope_types=rope_types, forms=forms, dtypes=dtypes,
                         layout=layout, scenarios=scenarios, max_position=max_position)
        tag = f"{_kind(case['config'])}/{case['dtype']}/{case['scenario']}"
        counts[tag] = counts.get(tag, 0) + 1
        found = _failure(caller, case)
        if found:
            minimal, steps = _shrink(caller, case, found[0])
            _raise(caller, minimal, _failure(caller, minimal, only=found[0]) or found, case, steps,
                   f"seed {seed}, case {i + 1} of {examples}", array, store, key, max_position)
    return {"examples": examples, "seed": seed, "cases": counts}


def _widened(config, d):
    """The config at a wider head_dim d (LongRoPE's lists extended by their last factor, M-RoPE's sections
    scaled): the diagnosis reads frequencies and positions back from many pairs, not from one."""
    config = json.loads(json.dumps(config))
    config["head_dim"] = d
    config.pop("hidden_size", None), config.pop("num_attention_heads", None)
    pairs = space.rotary_dim_of(config) // 2
    s = config.get("rope_scaling")
    if isinstance(s, dict):
        for key in ("short_factor", "long_factor"):
            if key in s:
                s[key] = (s[key] + [s[key][-1]] * pairs)[:pairs]
        if "mrope_section" in s:
            old = s["mrope_section"]
            t = max(1, round(old[0] * pairs / sum(old)))
            h = max(1, round(old[1] * pairs / sum(old)))
            s["mrope_section"] = [t, h, pairs - t - h]
    return config if space.valid(config) else None


def _probe(original, scenario, max_position):
    """The failing case's config (widened to 64 channels when narrower than 32) and dtype on 48 tokens x 4 heads
    in a scenario: enough rows and pairs for the check engine to read frequencies, positions and pairing back
    from the kernel's output."""
    config = original["config"]
    if config["head_dim"] < 32:
        config = _widened(config, 64) or config
    rng = random.Random(f"probe:{json.dumps(config, sort_keys=True)}:{scenario}")
    positions = space.draw_positions(rng, scenario, 48, max_position)
    if original["form"] == "mrope":
        positions = [positions, [max(0, p - 1) for p in positions], [max(0, p - 2) for p in positions]]
    x = np.random.default_rng(7).standard_normal((48, 4, config["head_dim"]))
    return _with(original, config=config, positions=positions, scenario=scenario,
                 x=_representable(x, original["dtype"]))


def _raise(caller, minimal, found, original, steps, origin, array, store, key, max_position):
    prop, text, _ = found
    claims, explanations, source = [], [], ""
    # The minimal case is too small to read a cause from (one row fits many conventions): the diagnosis reads
    # a larger failing output of the same kernel under the failing case's config.
    if prop == PASS_THROUGH:  # measured directly: no convention to fit
        claims, source = [f"measured: the kernel changes a pass-through channel ({text})"], "the minimal case"
    probes = [(f"the failing config on 48 tokens x 4 heads, {scenario} positions", _probe(original, scenario, max_position))
              for scenario in dict.fromkeys((original["scenario"], "chunked", "packed"))]
    # The first of them whose call fails and whose output fits a claim says what the kernel computed (each claim
    # is measured on that output); a single row fits too many conventions to be read alone, so the minimal case
    # speaks only when nothing larger fails.
    for what, case in probes + [("the case as first drawn", original)]:
        if claims:
            break
        if _failure(caller, case, only=AGREES) is not None:
            found_claims, found_explanations = _diagnosis(caller, case)
            if found_claims or not source:
                claims, explanations, source = found_claims, found_explanations, what
    if not source:
        claims, explanations = _diagnosis(caller, minimal)
        source = "the minimal case"
    store.keep(key, _portable(minimal))
    lines = [f"pe_suite.verify_rope: {prop}: FAILED ({origin}; shrunk in {steps} steps)",
             f"  failure: {text}",
             f"  minimal case: {_describe(minimal)}",
             "    " + _snippet(minimal, array).replace("\n", "\n    "),
             f"  diagnosis{' (the kernel on ' + source + ')' if source else ''}:"]
    lines += [f"    {c}" for c in claims] or ["    undetermined: no convention the check engine knows fits the output"]
    raise VerifyError("\n".join(lines), prop, _portable(minimal), explanations)


class _Store:
    """The failure file: {key: [minimal cases]}, rewritten whole (a failed write keeps the old one)."""

    def __init__(self, path):
        self.path = pathlib.Path(path) if path else None

    def _load(self):
        if not self.path or not self.path.exists():
            return {}
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def _save(self, data):
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.path)

    def cases(self, key):
        return list(self._load().get(key, []))

    def keep(self, key, case):
        data = self._load()
        kept = [c for c in data.get(key, []) if c != case]
        data[key] = [case] + kept[:9]
        self._save(data)

    def forget(self, key, case):
        data = self._load()
        if key in data:
            data[key] = [c for c in data[key] if c != case]
            if not data[key]:
                del data[key]
            self._save(data)


"""verify_rope, verify_sinusoidal and verify_alibi: property-based verification of a positional encoding where it
lives (PyTorch, or numpy; CUDA and Triton kernels through the caller's own wrapper), against the exact reference.
One driver (_run) draws cases, calls the kernel, shrinks a failure, replays kept failures and reports; each family
is a row of it (_Family).

RoPE's fn(x, positions, config) -> y must agree with the exact reference within the data's precision class
(check_rope's default budget: a correct kernel passes in bf16 too), keep pass-through channels' bits, give the same
bits twice, and agree as well for a row called alone and for the case served as a prefill then decode steps (bits
may differ from the whole call's: PyTorch's vectorised cos rounds a tail apart from the body; a cache that a later
call outgrows does not pass). The tables, sinusoidal and ALiBi, computed from a config (and positions), are held to
the same agreement and determinism; sinusoidal to the prefill and decode split too.

A failure is shrunk to the smallest case that still fails the same property and raised as an AssertionError with
the property, the minimal case as a runnable snippet and the check engine's diagnosis of the kernel's output.
Failures are kept in a file and replayed first on the next run."""
import dataclasses
import functools
import json
import math
import numbers
import operator
import os
import pathlib
import random
import tempfile
import warnings
from typing import Callable

import numpy as np

from . import _native
from . import _sinusoidal_space as sw
from . import black_box as bb
from . import config_space as space

DEFAULT_SEED = 20261130
DEFAULT_FAILURE_FILE = ".pe_suite/failures.json"
AGREES = "agrees with the exact reference within the data's precision class"
PASS_THROUGH = "pass-through channels keep their bits"
DETERMINISTIC = "the same call gives the same bits twice"
ROW_ALONE = "a row called alone agrees with the exact reference too"
PREFILL_DECODE = "a prefill then decode steps agree with the exact reference, call by call"
RAISED = "returns an output of x's shape and dtype"
TABLE_RAISED = "returns a table of the shape and dtype asked for"
# Not a property: a case none of whose elements in some position band the check can judge (their budgets reach
# the largest error any output could have). Such a case proves nothing either way: it is drawn again, counted,
# and too many of them fail the run (a check that cannot fail must not pass).
UNDECIDABLE = "the check can judge the case"
TABLE_DTYPES = ("float32", "bfloat16", "float16", "float64")
# Table widths engines use (512, 768, 1024 for the original Transformer and BERT-likes) and small ones with tails.
SINUSOIDAL_DIMS = (2, 4, 6, 8, 10, 16, 18, 32, 34, 64, 128, 130, 256, 512, 768, 1024)
# Head counts with ALiBi (BLOOM 16..112, MPT 32..64) and the non-powers of two whose slopes are interpolated.
ALIBI_HEADS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 71, 80, 96, 112, 128)


class VerifyError(AssertionError):
    """A verify_* failure: .property, .case (the minimal case, JSON-able), .diagnosis (its claims)."""

    def __init__(self, text, prop, case, diagnosis):
        super().__init__(text)
        self.property, self.case, self.diagnosis = prop, case, diagnosis


@dataclasses.dataclass(frozen=True)
class _Family:
    """One row of the driver: what verify_rope, verify_sinusoidal and verify_alibi differ in. A case is a dict
    (its "dtype" always); a found failure is (property, text, the failing call: RoPE's rows or a table's part
    case, None for the whole case)."""
    name: str  # verify_<name> in every message
    shelf: str  # the failure file's key after the kernel's name: RoPE's layout, else the family's name
    draw: Callable  # random.Random -> a case
    call: Callable  # (fn, case, array) -> (x as fn got it or None, y, None) or (x, None, what went wrong)
    failure: Callable  # (caller, case, only=None) -> the first property the case breaks (only: that one), or None
    candidates: Callable  # case -> smaller cases within the declared space, most reducing first
    diagnose: Callable  # (caller, minimal, found, original) -> (claims, the check's explanations, on what)
    describe: Callable  # case -> one line
    snippet: Callable  # (case, found) -> Python that reproduces the failing call and checks it
    declared: Callable  # a kept case -> whether this run's arguments could have drawn it (else not replayed)
    tag: Callable = operator.itemgetter("dtype")  # case -> its count in the summary
    budget: int = 400  # shrink candidates tried at most
    undecidable: bool = False  # its check can find a case undecidable: counted in the summary
    # What the caller declared the kernel takes (RoPE: "head_dims", "scenarios"): the diagnosis's own calls keep to it
    limits: dict = dataclasses.field(default_factory=dict)


# -- the driver: draw, call, shrink, replay, report ---------------------------------------------------------------

def _run(family, fn, array, *, examples, seed, failure_file, key):
    """The kernel's kept failures replayed, then `examples` drawn cases: the first failure is shrunk and raised
    (VerifyError), else a summary dict returned."""
    if seed is None:
        seed = int(os.environ.get("PE_SUITE_SEED", DEFAULT_SEED))
    caller = _Caller(fn, array, family.call, family.limits)
    key = f"{key or _name(fn)}/{family.shelf}/{array}"
    store = _Store(failure_file)
    for kept in store.cases(key):  # the last run's failures first
        if not family.declared(kept):  # a kept case of a run with other arguments is not this run's to replay
            continue
        case = _from_portable(kept)
        found = family.failure(caller, case)
        if found and found[0] != UNDECIDABLE:
            _raise(family, caller, case, found, case, 0, f"replayed from {failure_file}", store, key)
        store.forget(key, kept)

    counts, undecidable = {}, []
    for i in range(examples):
        case = family.draw(random.Random(f"{seed}:{i}"))
        tag = family.tag(case)
        counts[tag] = counts.get(tag, 0) + 1
        found = family.failure(caller, case)
        if found and found[0] == UNDECIDABLE:
            undecidable.append(f"case {i + 1} ({tag}): {found[1]}")
        elif found:
            minimal, steps, shrunk = _shrink(family, caller, case, found[0])
            again = family.failure(caller, minimal, only=found[0])
            if again is None:  # the kernel's results depend on its earlier calls: show the case as drawn
                minimal, steps, shrunk, found = case, 0, None, (
                    found[0], found[1] + " (the smaller cases did not fail when run again: the kernel's output "
                    "depends on its earlier calls)", found[2])
            # The failure as the shrink first met it: a kernel with state has met the minimal case since.
            _raise(family, caller, minimal, shrunk or again or found, case, steps,
                   f"seed {seed}, case {i + 1} of {examples}", store, key)
    lead = f"verify_{family.name}: {len(undecidable)} of {examples} drawn cases could not be judged"
    if 2 * len(undecidable) > examples:
        raise VerifyError(f"{lead} (seed {seed}): the budget reaches the largest error any output could have, so those "
                          f"cases could not fail. First: {undecidable[0]}", UNDECIDABLE, None, [])
    if undecidable:  # stacklevel: the caller of verify_*
        warnings.warn(f"{lead} (the data type's budget reaches any output's error at their positions) and were not "
                      f"counted. First: {undecidable[0]}", UserWarning, stacklevel=3)
    summary = {"examples": examples, "seed": seed, "cases": counts}
    return dict(summary, undecidable=len(undecidable)) if family.undecidable else summary


def _shrink(family, caller, case, prop):
    """Greedy: the first smaller candidate that still breaks `prop` replaces the case, until none does or the
    family's budget of candidates is spent (a candidate equal to the case never counts as progress). (the smallest
    case, the steps taken, its failure as found then or None for none taken)."""
    steps, budget, progress, shrunk = 0, family.budget, True, None
    while progress and budget > 0:
        progress = False
        for candidate in family.candidates(case):
            if _same(candidate, case):
                continue
            budget -= 1
            if budget <= 0:
                break
            found = family.failure(caller, candidate, only=prop)
            if found and found[0] == prop:
                case, steps, progress, shrunk = candidate, steps + 1, True, found
                break
    return case, steps, shrunk


def _same(a, b):
    """Whether a candidate is the case itself: every field equal (x, RoPE's input, as an array)."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if k == "x" else a[k] == b[k] for k in a)


def _raise(family, caller, minimal, found, original, steps, origin, store, key):
    prop, text, _ = found
    claims, explanations, source = family.diagnose(caller, minimal, found, original)
    store.keep(key, _portable(minimal))
    lines = [f"pe_suite.verify_{family.name}: {prop}: FAILED ({origin}; shrunk in {steps} steps)",
             f"  failure: {text}",
             f"  minimal case: {family.describe(minimal)}",
             "    " + family.snippet(minimal, found).replace("\n", "\n    "),
             f"  diagnosis{' (the kernel on ' + source + ')' if source else ''}:"]
    lines += [f"    {c}" for c in claims] or ["    undetermined: no convention the check engine knows fits the output"]
    raise VerifyError("\n".join(lines), prop, _portable(minimal), explanations)


def _portable(case):
    """The case as JSON (the failure file, VerifyError.case): x, RoPE's input, as nested lists."""
    return dict(case, x=np.asarray(case["x"]).tolist()) if "x" in case else case


def _from_portable(case):
    return dict(case, x=np.asarray(case["x"], dtype=np.float64)) if "x" in case else case


def _name(fn):
    """A name for the failure file that is the same in every run: module and qualified name; for a
    functools.partial, its function's with its arguments."""
    if isinstance(fn, functools.partial):
        args = ", ".join([repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in sorted(fn.keywords.items())])
        return f"{_name(fn.func)}({args})"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


class _Store:
    """The failure file: {key: [minimal cases]}, rewritten whole through a temporary file of its own. It never
    hides the kernel's failure: a file that cannot be read counts as empty, one that cannot be written is
    warned about."""

    def __init__(self, path):
        self.path = pathlib.Path(path) if path else None

    def _load(self):
        if not self.path or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as e:
            warnings.warn(f"pe_suite.verify_rope: failure_file {self.path} not read ({e}); starting without it")
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, data):
        if not self.path:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, prefix=self.path.name, suffix=".tmp",
                                             delete=False) as f:
                json.dump(data, f)
            os.replace(f.name, self.path)
        except OSError as e:
            warnings.warn(f"pe_suite.verify_rope: failure_file {self.path} not written ({e})")

    def cases(self, key):
        kept = self._load().get(key, [])
        return [c for c in kept if isinstance(c, dict)] if isinstance(kept, list) else []

    def keep(self, key, case):
        self._put(key, [case] + [c for c in self.cases(key) if c != case][:9])

    def forget(self, key, case):
        self._put(key, [c for c in self.cases(key) if c != case])

    def _put(self, key, cases):
        data = self._load()
        data[key] = cases
        if not cases:
            del data[key]
        self._save(data)


class _Caller:
    """fn and the array library its inputs are made in ("torch" or "numpy"); call(case) through the family's call
    (RoPE's by default): (x as the kernel got it before the call, y, None) or (x, None, the failure's text)."""

    def __init__(self, fn, array, call=None, limits=None):
        self.fn, self.array, self._call, self.limits = fn, array, call or _call_rope, limits or {}

    def call(self, case):
        return self._call(self.fn, case, self.array)


def _check_examples(examples):
    if not isinstance(examples, int) or examples < 1:
        raise ValueError(f"examples: expected a positive integer; got {examples!r}")


def _check_max_position(max_position):
    if not isinstance(max_position, int) or max_position < 64:
        raise ValueError(f"max_position: expected an integer >= 64; got {max_position!r}")


def _torch():
    import torch
    return torch


_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def _bits(a):
    """a's bits as a C-contiguous integer array of its element size (a view where a is contiguous)."""
    if hasattr(a, "detach"):
        return a.contiguous().view(_torch_int(a.element_size())).numpy()
    return np.ascontiguousarray(a).view(_INTS[a.itemsize])


@functools.cache
def _torch_int(size):
    """torch's integer type of `size` bytes (torch is imported only where tensors are checked)."""
    torch = _torch()
    return {2: torch.int16, 4: torch.int32, 8: torch.int64}[size]


def _same_bits(a, b):
    """Whether a and b (of one shape and type, as _called checked) hold the same bits."""
    return _native._same_bytes(_bits(a), _bits(b))


def _twice(caller, case, y):
    """DETERMINISTIC's failure unless a second call of the same inputs gives y's bits again, else None."""
    _, y2, error = caller.call(case)
    if error or not _same_bits(y, y2):
        return DETERMINISTIC, error or "a second call of the same inputs gave other bits", None
    return None


def _claims(report):
    return [f"the data fits: {e['fits']} ({e['support']})" for e in report.explanations]


# -- RoPE ---------------------------------------------------------------------------------------------------------

def verify_rope(fn, *, examples=100, seed=None, dtypes=("float32", "bfloat16"), layout="halfsplit",
                rope_types=space.ROPE_TYPES, forms=("text",), scenarios=space.SCENARIOS, max_position=1 << 21,
                array="torch", failure_file=DEFAULT_FAILURE_FILE, key=None, contract=None, semantics="hf",
                head_dims=None):
    """Drives fn(x, positions, config) -> y through `examples` drawn cases; raises VerifyError (an
    AssertionError) with the smallest failing case and its diagnosis, else returns a summary dict.

    dtypes: of x and y ("float32", "bfloat16", "float16"); layout: "halfsplit" (HF's rotate_half) or
    "interleaved" (GPT-J); rope_types: HF's rope_type values drawn (the default: HF's classic six;
    "proportional", Gemma 4's, and "xpos", flash-attention's RotaryEmbedding(scale_base), by name: its config
    states pe-suite's keys xpos_scale_base, xpos_centre and xpos_keys, the gain multiplying q's pairs and dividing
    k's, its positions within 4 scale_bases of the centre); semantics: which engine's reading of them fn follows, "hf"
    (transformers), "vllm" or "sglang" (dynamic NTK as one table at factor·L, or Hunyuan's rope_scaling.alpha;
    YaRN's attention_factor times its mscale), "tgi" (LongRoPE's list per token, as text-generation-inference's
    SuRotaryEmbedding), stated in the drawn config as pe-suite's keys; forms: "text", "partial"
    (partial_rotary_factor), "mrope" (rope_scaling.mrope_section, positions [3, tokens]) and "axial" (a video
    transformer's config: rope_axes_dim channels per axis, each its own ladder at rope_theta, unscaled; positions
    [3, tokens], the (frame, row, column) of a drawn grid); scenarios:
    "prefill", "decode", "chunked", "packed", "left_padding"; max_position: the largest decode offset;
    array: "torch" (tensors) or "numpy"; seed: the draw (default 20261130, or $PE_SUITE_SEED); failure_file:
    where failures are kept and replayed first (None: nowhere); key: the kernel's name there (default: its
    module and qualified name; a functools.partial's with its arguments); contract: a tighter budget than the
    data's class (check_rope's contract=, e.g. "rope.scalar_f64" for a kernel whose angles are double); head_dims:
    the head sizes the kernel supports (a CUDA kernel's 64 and 128, say): cases are drawn and shrunk among them only
    (None: every head size of the space, 2 to 256).

    fn gets inputs of its own on every call (it may rotate x in place) and should give the same result for
    the same inputs whatever it was called with before: state that changes results (a cache that does not
    grow, a dynamic base that never shrinks back) is a finding, reported with the calls that show it."""
    _check_rope_arguments(dtypes, rope_types, forms, scenarios, layout, array, semantics)
    _check_examples(examples)
    _check_max_position(max_position)
    head_dims = _check_head_dims(head_dims)

    def declared(c):
        return (c.get("dtype") in dtypes and space.rope_type_of(c.get("config", {})) in rope_types and c.get("form") in forms
                and c.get("scenario") in scenarios and c.get("layout") == layout and c.get("contract") == contract
                and space.semantics_fit(c.get("config", {}), semantics) and _head_dim_fits(c, head_dims))

    def draw(rng):  # draw_case is looked up at each draw: a test may replace it
        for _ in range(1000):
            case = draw_case(rng, rope_types=rope_types, forms=forms, dtypes=dtypes, layout=layout,
                             scenarios=scenarios, max_position=max_position, contract=contract, semantics=semantics)
            if _head_dim_fits(case, head_dims):
                return case
        raise ValueError(f"head_dims {head_dims}: no case of rope_types {rope_types} x forms {forms} drawn with them")

    def candidates(case):
        return (c for c in _candidates(case, dtypes=dtypes) if _head_dim_fits(c, head_dims))

    family = _Family(
        name="rope", shelf=layout, budget=600, undecidable=True, call=_call_rope, failure=_failure, draw=draw,
        candidates=candidates,
        diagnose=functools.partial(_rope_diagnosis, max_position), describe=_describe,
        snippet=functools.partial(_snippet, array), declared=declared,
        tag=lambda case: f"{space.rope_type_of(case['config'])}/{case['dtype']}/{case['scenario']}",
        limits={"head_dims": head_dims, "scenarios": tuple(scenarios)})
    return _run(family, fn, array, examples=examples, seed=seed, failure_file=failure_file, key=key)


def _check_rope_arguments(dtypes, rope_types, forms, scenarios, layout, array, semantics="hf"):
    """verify_rope's and strategies.cases's declared space: ValueError naming the first argument out of it."""
    if semantics not in space.SEMANTICS:
        raise ValueError(f"semantics: expected one of {', '.join(space.SEMANTICS)}; got {semantics!r}")
    for name, given, known in (("dtypes", dtypes, space.DTYPES), ("rope_types", rope_types, space.KNOWN_ROPE_TYPES),
                               ("forms", forms, space.FORMS), ("scenarios", scenarios, space.SCENARIOS)):
        space.check_choices(name, given, known)
    _check_layout(layout, space.LAYOUTS)
    space.check_array(array, dtypes)


def _check_head_dims(head_dims):
    """None, or a set of even head sizes of which the space draws at least one (ValueError naming it otherwise)."""
    if head_dims is None:
        return None
    values = [head_dims] if isinstance(head_dims, (numbers.Integral, str)) else list(head_dims)
    if not values or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 2 or d % 2 for d in values):
        raise ValueError(f"head_dims: expected None or a list of even head sizes of 2 or more; got {head_dims!r}")
    if not set(int(d) for d in values) & set(space.HEAD_DIMS):
        raise ValueError(f"head_dims: none of {head_dims!r} is a head size verify_rope draws "
                         f"({', '.join(map(str, space.HEAD_DIMS))})")
    return frozenset(int(d) for d in values)


def _head_dim_fits(case, head_dims):
    return head_dims is None or case.get("config", {}).get("head_dim") in head_dims


def _check_layout(layout, known):
    if layout not in known:
        raise ValueError(f"layout: expected one of {', '.join(known)}; got {layout!r}")


def _representable(values, dtype):
    """float64 values rounded to dtype (RNE), so the stored case is exactly what the kernel was given."""
    if dtype != "bfloat16":
        return values.astype(dtype).astype(np.float64)
    torch = _torch()
    return torch.from_numpy(values).to(torch.bfloat16).to(torch.float64).numpy()


def draw_case(rng, *, rope_types, forms, dtypes, layout, scenarios, max_position, contract=None, semantics="hf"):
    config, form = space.draw_config(rng, rope_types, forms)
    config = space.apply_semantics(rng, config, semantics)
    scenario = rng.choice(scenarios)
    tokens = rng.randint(*space.SPACE["tokens"]["decode" if scenario == "decode" else "other"])
    if scenario == "crossing":  # a prefill of two rows at least, two decode steps, a new sequence of one row
        tokens = max(4, tokens)
    heads = rng.randint(*space.SPACE["heads"])
    if space.rope_type_of(config) == "xpos":  # positions within reach of one centre, the call's middle
        positions = space.draw_positions(rng, scenario, tokens, min(max_position, 2 * space.xpos_reach(config)))
        config["xpos_centre"] = (max(positions) + 1) // 2
    else:
        positions = space.draw_positions(rng, scenario, tokens, max_position, space.length_threshold(config))
    if form == "mrope":  # text tokens have t = h = w; an image's patches sit a few rows and columns back
        positions = [positions, [max(0, p - rng.randint(0, 3)) for p in positions],
                     [max(0, p - rng.randint(0, 5)) for p in positions]]
    elif form == "axial":  # the scenario's positions as cells of a video, non-square most of the time
        positions = space.axial_grid(positions, rng.randint(2, 48), rng.randint(2, 64))
    dtype = rng.choice(dtypes)
    np_rng = np.random.default_rng(rng.getrandbits(63))
    scale = 2.0 ** rng.randint(*space.SPACE["input_scale_log2"])
    x = _representable(np_rng.standard_normal((tokens, heads, config["head_dim"])) * scale, dtype)
    return {"config": config, "form": form, "scenario": scenario, "layout": layout, "dtype": dtype,
            "positions": positions, "x": x, "contract": contract, "max_position": max_position}


# x in the kernel's type, per float64 x: a case's whole call, its second call and its shifted call read one x
# (a case's x is never written in place; the kernel gets a copy of it).
_TYPED = {}


def _typed(case, array):
    """The case's x in the kernel's type (kept in _TYPED)."""
    kept = _TYPED.get(id(case["x"]))
    if kept is not None and kept[0] is case["x"] and kept[1] == (case["dtype"], array):
        return kept[2]
    x = np.asarray(case["x"], dtype=np.float64)
    x = _torch().from_numpy(x).to(getattr(_torch(), case["dtype"])) if array == "torch" else x.astype(case["dtype"])
    _keep_typed(case, array, x)
    return x


def _keep_typed(case, array, x):
    if len(_TYPED) > 16:
        _TYPED.clear()
    _TYPED[id(case["x"])] = (case["x"], (case["dtype"], array), x)


def _rope_inputs(case, array):
    positions = np.asarray(case["positions"], dtype=np.int64)
    return _typed(case, array), _torch().from_numpy(positions) if array == "torch" else positions


def _call_rope(fn, case, array):
    """(x as the kernel got it before the call, y, None) or (x, None, the failure's text). The kernel gets
    inputs of its own: one that rotates x in place (vLLM's style) is checked against x as it was, and one
    that changes x before rotating it is not excused by it."""
    x, positions = _rope_inputs(case, array)
    config = _json_copy(case["config"])  # fn may not change the case
    return (x,) + _called(fn, (_copy(x), positions, config), array, x.shape, x.dtype, " like x")


def _copy(a):
    return a.clone() if hasattr(a, "clone") else np.array(a, copy=True)


_NESTED = (dict, list, tuple)


def _json_copy(v):
    """A deep copy of a JSON value (a config, positions), as json.loads(json.dumps(v)) gives it (tuples become
    lists) without the text in between."""
    if isinstance(v, dict):
        return {str(k): _json_copy(e) if isinstance(e, _NESTED) else e for k, e in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_copy(e) if isinstance(e, _NESTED) else e for e in v]
    return v


def _called(fn, args, array, shape, dtype, like=""):
    """(a copy of fn(*args), None), or (None, what went wrong): fn raised, or returned other than an array of the
    shape and dtype asked for (dtype: RoPE's x.dtype, or a table's name of one). A copy: a buffer the kernel reuses
    cannot change what was checked."""
    try:
        y = fn(*args)
    except Exception as e:  # noqa: BLE001 -- the kernel's own error is the finding
        return None, f"fn raised {type(e).__name__}: {e}"
    torch = array == "torch"
    if not (hasattr(y, "detach") if torch else isinstance(y, np.ndarray)):
        want = "a torch tensor" if torch else "a numpy array"
        return None, f"fn returned {type(y).__module__}.{type(y).__name__}; want {want}{like}"
    y = y.detach().cpu().clone() if torch else np.array(y, copy=True)
    got = y.dtype if not isinstance(dtype, str) else str(y.dtype).replace("torch.", "") if torch else y.dtype.name
    if tuple(y.shape) != tuple(shape) or got != dtype:
        return None, f"fn returned shape {tuple(y.shape)} {got}; want {tuple(shape)} {dtype}"
    return y, None


def _xpos_split(config):
    """(the config without pe-suite's xPos keys, them as check_rope's keywords): no HF config states xPos."""
    if "xpos_scale_base" not in config:
        return config, {}
    return ({k: v for k, v in config.items() if k not in space.XPOS_KEYS},
            {k: config[k] for k in space.XPOS_KEYS if k in config})


def _check(case, x, y):
    config, xpos = _xpos_split(case["config"])
    return _native.check_rope(x, y, np.asarray(case["positions"], dtype=np.int64), hf_config=config,
                              layout=case["layout"], contract=case.get("contract"), **xpos)


def _verdict(case, x, y):
    """_check's report where it passes, read from the check's verdict alone (no text, bands or worst elements
    built: most calls pass), else _check's whole one: every report read past its verdict is whole. The second
    check is the first's call again, so its warnings (a config key not read) are the first's, not shown twice."""
    positions = np.asarray(case["positions"], dtype=np.int64)
    config, xpos = _xpos_split(case["config"])
    report = _native._rope_verdict(x, y, positions, hf_config=config, layout=case["layout"],
                                   contract=case.get("contract"), **xpos)
    if report.verdict == "PASS":
        return report
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _check(case, x, y)


def _worst_text(report):
    w = report.worst[0] if report.worst else None
    if not w:
        return str(report).strip().splitlines()[-1]
    return (f"token {w['row']} head {w['head']} channel {w['channel']} at position {w['position']}: got "
            f"{w['value']!r}, exact {w['exact']!r}, error {_number(w['abs_error'])} > budget {_number(w['budget'])}")


def _number(v):
    """An error or budget of a report's worst element: a NaN or infinite output's is None there."""
    return f"{v:.3g}" if isinstance(v, (int, float)) else repr(v)


def _undecidable_text(report):
    return next((line for line in str(report).splitlines() if line.startswith("undecidable:")), "undecidable")


def _split_calls(case):
    """The calls of a prefill and decode steps, each (rows, what it is), and one row alone."""
    tokens = np.asarray(case["x"]).shape[0]
    return _prefill_then_steps(tokens, case.get("scenario") == "crossing"), \
        [slice(tokens // 2, tokens // 2 + 1)] if tokens > 1 else []


def _split_pieces(case, wanted=lambda prop: True):
    """The split calls as _failure makes them, in order: (property, rows, what it is)."""
    decode, alone = _split_calls(case)
    return ([(PREFILL_DECODE, rows, what) for rows, what in decode if wanted(PREFILL_DECODE)] +
            [(ROW_ALONE, rows, "called alone") for rows in alone if wanted(ROW_ALONE)])


def _prefill_then_steps(tokens, again=False):
    """The rows as an engine serves them, each call (rows, what it is): a prefill of all but the last tokens (at most
    two), then one decode step per remaining token, in order; with `again` (a crossing case: the prefill ends
    at the original context, the steps pass it), then the prefill's rows but its last as a new sequence, so that a
    table kept from the longer steps shows (dynamic NTK's short, long, then short again)."""
    split = max(1, tokens - 2)
    if tokens < 2:
        return []
    calls = [(slice(0, split), "as a prefill")] + [(slice(k, k + 1), "as a decode step") for k in range(split, tokens)]
    return calls + [(slice(0, split - 1), "as a new sequence after the decode steps")] if again and split > 1 else calls


def _split_outputs(caller, case, pieces):
    """The split calls (property, rows, words) made in order: ([(property, rows, label, sub case, x, y)], the
    first call that raised as (property, text, rows) or None)."""
    outs = []
    typed = _typed(case, caller.array) if pieces else None
    for prop, rows, what in pieces:
        sub = _rows(case, rows)
        _keep_typed(sub, caller.array, typed[rows])  # rounding is per element: the rows of the whole x in its type
        xs, ys, error = caller.call(sub)
        label = f"tokens {rows.start}..{rows.stop - 1} {what}" if rows.stop - rows.start > 1 else \
            f"token {rows.start} {what}"
        if error:
            return outs, (prop, f"{label}: {error}", rows)
        outs.append((prop, rows, label, sub, xs, ys))
    return outs, None


def _agreement(case, whole, outs, in_order=False):
    """Agreement of the whole call (x, y; None when not asked) and of the split calls' outputs: (AGREES's report or
    None, the first failure as (property, text, rows) or None), the whole call's first, or (in_order) the first in
    the order the calls were made (the split calls, then the whole). Stacked calls of the check engine when they
    pass (_stacked_pass), else call by call: each call's reference is its own (under dynamic and LongRoPE it depends
    on the call's own longest position)."""
    parts = ([(AGREES, None, None, case) + whole] if whole else []) + list(outs)
    if not parts:
        return None, None
    if len(parts) > 1 and (passed := _stacked_pass(case, parts)) is not None:
        return passed[0], None
    first, undecidable = None, None
    for prop, rows, label, sub, xs, ys in (parts[1:] + parts[:1] if whole and in_order else parts):
        report = _verdict(sub, xs, ys)
        if prop == AGREES:
            first = report
        if report.verdict == "UNDECIDABLE":
            undecidable = undecidable or (UNDECIDABLE, (label or "the whole call") + ": " + _undecidable_text(report),
                                          rows)
        elif not report.passed:
            return first, (prop, _worst_text(report) if label is None else f"{label}: {_worst_text(report)}", rows)
    return first, undecidable


def _stacked_pass(case, parts):
    """(AGREES's report or None,) when every call passes, shown by few calls of the check engine, else None (the
    caller checks call by call). An element's verdict is a function of its own x, y, position and the call's plan
    (each row's budget is its own whatever the batch around it), and a call's plan of the config and, under
    dynamic and LongRoPE only, its longest position: the calls of one plan are checked as one stacked call, and a
    split call's rows whose x and y bits equal the whole call's rows of that plan are left out (their verdicts are
    those rows'). A stacked call that passes with every element judged (none undecidable) says each call passes;
    one with an element over budget says one fails; else (some element undecidable) the stack of every call's rows
    decides as it always has, and under dynamic and LongRoPE the calls are checked one by one, as they always were."""
    whole = parts[0] if parts[0][0] == AGREES else None
    groups = {}
    for key, part in zip(_plan_keys(case, parts), parts):
        groups.setdefault(key, []).append(part)
    checked = []  # (the group, the stack checked, its report)
    for group in groups.values():
        stack = _without_repeats(group, whole) if group[0] is whole else group
        report = _check_stack(case, stack)
        if not report.passed and report.verdict != "UNDECIDABLE":
            return None
        checked.append((group, stack, report))
    if all(report.passed and report.undecidable == 0 for _, _, report in checked):
        return (checked[0][2] if whole else None,)
    if len(groups) > 1 or space.rope_type_of(case["config"]) in space.LENGTH_DEPENDENT:
        return None
    # Some element undecidable: the stack of every call's rows decides, as it always has.
    group, stack, report = checked[0]
    report = report if stack is group else _check_stack(case, group)
    return (report,) if report.passed else None


def _plan_keys(case, parts):
    """What each call's plan depends on besides the config: under dynamic and LongRoPE its length (HF's seq_len =
    max(position_ids) + 1) as the scaling reads it (_native._rope_plan_lengths), nothing otherwise."""
    if space.rope_type_of(case["config"]) not in space.LENGTH_DEPENDENT:
        return [None] * len(parts)
    lengths = [_length_of(part[3]) for part in parts]
    return _native._rope_plan_lengths(lengths, hf_config=case["config"], layout=case["layout"])


def _without_repeats(group, whole):
    """The group's calls, each split call cut to its rows whose x and y bits differ from the whole call's same
    rows (a call with none left out), the whole call first."""
    _, _, _, _, x, y = whole
    bx, by = _bits(x), _bits(y)
    out = []
    for part in group:
        prop, rows, label, sub, xs, ys = part
        if part is whole:
            out.append(part)
            continue
        bxs, bys = _bits(xs), _bits(ys)
        if _native._same_bytes(bxs, bx[rows]) and _native._same_bytes(bys, by[rows]):  # every row repeats (usual)
            continue
        same = ((bxs == bx[rows]) & (bys == by[rows])).reshape(len(bx[rows]), -1).all(axis=1)
        if same.all():
            continue
        keep = np.flatnonzero(~same)
        p = np.asarray(sub["positions"])[..., keep]
        at = _torch().from_numpy(keep) if hasattr(xs, "detach") else keep
        out.append((prop, rows, label, dict(sub, positions=p.tolist()), xs[at], ys[at]))
    return out


def _check_stack(case, parts):
    """check_rope of the parts' rows stacked (each row's positions its own)."""
    if len(parts) == 1:
        _, _, _, sub, xs, ys = parts[0]
        return _verdict(sub, xs, ys)
    join = (lambda ps: _torch().cat(ps)) if hasattr(parts[0][4], "detach") else np.concatenate
    positions = np.concatenate([np.asarray(p[3]["positions"]) for p in parts], axis=-1).tolist()
    return _verdict(_with(case, x=np.zeros((0,)), positions=positions), join([p[4] for p in parts]),
                  join([p[5] for p in parts]))


def _failure(caller, case, only=None):
    """(property, text, the failing call's rows or None for the whole case) of the first property the case
    breaks, else None. The split calls come first, as an engine makes them (a prefill, then decode steps): a
    cache sized by the prefill must grow for the steps. The whole call's agreement is reported before theirs."""
    def wanted(p):
        return only is None or only == p

    outs, raised = _split_outputs(caller, case, _split_pieces(case, wanted))
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
    # A crossing case's calls are a sequence, each call's output possibly the state its predecessors left: its first
    # failing call in the order made is the one to show (a stateless kernel's whole call wrong is the general failure,
    # whatever else failed; then a raise).
    crossing = case["scenario"] == "crossing"
    report, failed = _agreement(case, (x, y) if wanted(AGREES) else None, outs, in_order=crossing)
    if failed and failed[0] == UNDECIDABLE and not raised:
        return None if only is not None else failed
    if failed or raised:  # a crossing's first failing call, a raise before an undecidable one
        return failed if failed and (failed[0] == AGREES or crossing and failed[0] != UNDECIDABLE) else raised or failed
    if wanted(DETERMINISTIC) and (failed := _twice(caller, case, y)):
        return failed
    # The black-box properties, held to the data type's rounding (black_box.py): beyond the class budget's reach
    # where a float32 angle's error makes that budget loose. They are a rotation's (norms kept, the inverse, a
    # shift of every position): xPos's gain breaks each by design, and its exact check above holds it instead.
    if space.rope_type_of(case["config"]) == "xpos" or not any(wanted(p) for p in (bb.NORM, bb.INVERSE, bb.RELATIVE)):
        return None
    def call(**changes):  # a property's own call of fn, on x (in fn's type) or positions changed
        # A sub case read by this call alone (_call_rope copies what fn gets): the config and positions shared, x
        # kept in fn's type as it is (the typed x _typed gives back), not as float64 values made only to be rounded.
        sub = dict(case, **changes)
        if "x" in changes:
            _keep_typed(sub, caller.array, changes["x"])
        return caller.call(sub)[1:]

    consts = bb.constants_of(report) if report is not None else bb.constants(case)
    found = next(bb.failures(case, x, y, consts, call, wanted), None)
    return found and found + (None,)


def _with(case, **changes):
    """A copy of the case with some fields replaced (x, a float64 array, is never written in place)."""
    c = dict(case, **{k: _json_copy(case[k]) for k in ("config", "positions") if k not in changes})
    c.update(changes)
    return c


def _rows(case, rows):
    """The case's rows (a slice or a list of indices): its config is the case's own object, as every use of a sub
    case reads it only (a config changed is a new one, _with's); a copy of it was a twentieth of verify_rope's time."""
    x = np.asarray(case["x"])[rows]
    p = np.asarray(case["positions"])[..., rows]
    return dict(case, x=x, positions=p.tolist())


def _head_dim(case, d):
    """The case at head_dim d: x's first d channels, the config's lists and sections cut to it (a partial form
    stays partial)."""
    f = case["config"].get("partial_rotary_factor")
    if f is not None and not (int(d * f) % 2 == 0 and 2 <= int(d * f) < d):
        return None

    def sections(old, pairs):
        t = max(1, min(old[0], pairs - 2))
        return t, max(1, min(old[1], pairs - t - 1))

    config = _at_head_dim(case["config"], d, sections)
    return None if config is None else _with(case, config=config, x=np.asarray(case["x"])[..., :d])


def _at_head_dim(config, d, sections):
    """The config at head_dim d, or None where HF's formulas are not defined there: LongRoPE's lists cut, or
    extended by their last factor; M-RoPE's first two sections sections(old, pairs), the third the rest."""
    config = _json_copy(config)
    config["head_dim"] = d
    config.pop("hidden_size", None), config.pop("num_attention_heads", None)
    pairs = space.rotary_dim_of(config) // 2
    s = config.get("rope_scaling")
    if isinstance(s, dict):
        for key in ("short_factor", "long_factor"):
            if key in s:
                s[key] = (s[key] + s[key][-1:] * pairs)[:pairs]
        if "mrope_section" in s:
            if pairs < 3:
                return None
            t, h = sections(s["mrope_section"], pairs)
            s["mrope_section"] = [t, h, pairs - t - h]
    if "rope_axes_dim" in config:  # pairs per axis cut as M-RoPE's sections are
        if pairs < 3:
            return None
        t, h = sections([a // 2 for a in config["rope_axes_dim"]], pairs)
        config["rope_axes_dim"], config["attention_head_dim"] = [2 * t, 2 * h, 2 * (pairs - t - h)], d
    return config if space.valid(config) else None


def _candidates(case, dtypes):
    """Smaller cases within the declared space (dtypes; the config space's rules), most reducing first."""
    x = np.asarray(case["x"])
    tokens, heads, d = x.shape
    if case["scenario"] == "crossing" and space.length_threshold(case["config"]) is not None:
        yield from _crossing_candidates(case)
        return
    if case["dtype"] != "float32" and "float32" in dtypes:
        yield _with(case, dtype="float32")
    if heads > 1:
        yield _with(case, x=x[:, :1])
    yield from _fewer_rows(tokens, functools.partial(_rows, case))
    if 1 < tokens <= 16:
        for t in range(tokens):
            yield _rows(case, [k for k in range(tokens) if k != t])
    for smaller in range(2, d, 2):
        c = _head_dim(case, smaller)
        if c is not None:
            yield c
    yield from _smaller_positions(case)
    positions = np.asarray(case["positions"])
    if positions.size and positions.min() > 0:
        yield _with(case, positions=(positions - positions.min()).tolist())
    for config in _config_shrinks(case["config"]):
        yield _with(case, config=config)
    if not np.all(x == 1.0):
        yield _with(case, x=np.full_like(x, 1.0))


def _config_shrinks(config):
    """Simpler configs within the space: the default theta, a scaling key left out, a whole factor."""
    candidates = []
    if config.get("rope_theta") != 10000.0:  # a theta of its own is kept only when the failure needs it
        candidates.append(dict(config, rope_theta=10000.0))
    s = config.get("rope_scaling")
    if isinstance(s, dict):
        for key in ("attention_factor", "beta_fast", "beta_slow"):
            if key in s:
                candidates.append(dict(config, rope_scaling={k: v for k, v in s.items() if k != key}))
        if "factor" in s and s["factor"] != round(s["factor"]) and round(s["factor"]) > 1:
            rounded = dict(config, rope_scaling=dict(s, factor=float(round(s["factor"]))))
            original = s.get("original_max_position_embeddings")
            if original and config.get("max_position_embeddings") == int(original * s["factor"]):
                rounded["max_position_embeddings"] = int(original * round(s["factor"]))  # the space's YaRN rule
            candidates.append(rounded)
    return [c for c in candidates if space.valid(c)]


def _crossing_candidates(case):
    """A crossing case's shrinks. Its calls are a sequence whose failure may be a kernel's state: a kernel that keeps
    one table per config has served this config already, and a smaller case of it would meet that table, not a
    fresh one, and fail where a fresh kernel would not. So each shrink is of another config (a smaller head_dim, the
    default theta, a scaling key left out), which a per-config kernel meets afresh, and takes with it the last four
    rows (a prefill of two ending at the original context, two steps, a new sequence) and one head."""
    x = np.asarray(case["x"])
    small = _rows(case, slice(x.shape[0] - 4, x.shape[0])) if x.shape[0] > 4 else case
    small = _with(small, x=np.asarray(small["x"])[:, :1])
    for smaller in range(2, x.shape[2], 2):
        c = _head_dim(small, smaller)
        if c is not None:
            yield c
    for config in _config_shrinks(case["config"]):
        yield _with(small, config=config)


def _fewer_rows(tokens, rows):
    """Shrinks of the tokens, RoPE's and sinusoidal's: each of the first 8 rows alone, then each half."""
    if tokens > 1:
        yield from (rows(slice(t, t + 1)) for t in range(min(tokens, 8)))
        yield from (rows(slice(0, tokens // 2)), rows(slice(tokens // 2, tokens)))


def _smaller_positions(case):
    """Shrinks of the positions, RoPE's and sinusoidal's: each one (on every M-RoPE axis) to 0 or 1, then all halved."""
    positions = np.asarray(case["positions"])
    for k in range(positions.shape[-1]):
        for value in (0, 1):
            if positions[..., k].max() > value:
                p = positions.copy()
                p[..., k] = value
                yield _with(case, positions=p.tolist())
    if positions.size and positions.max() > 1:
        yield _with(case, positions=(positions // 2).tolist())


def _snippet(array, case, found):
    """The minimal case as Python to paste: its inputs, then the kernel's call(s) and the check of the failing
    one (for a split property, the prefill and decode calls up to it, in order)."""
    prop, _, rows = found
    x = np.asarray(case["x"])
    values, (mod, ctor) = ", ".join(repr(float(v)) for v in x.reshape(-1)), _imports(array)
    xs = (f"torch.tensor([{values}], dtype=torch.float64).to(torch.{case['dtype']})" if array == "torch" else
          f"np.array([{values}]).astype(np.{case['dtype']})")
    lines = [f"import {mod}\nimport pe_suite", f"config = {case['config']!r}", f"positions = {ctor}({case['positions']})",
             f"x = {xs}.reshape{x.shape}"]
    calls = [slice(0, x.shape[0])]
    if rows is not None:  # the split calls up to the failing one, as they were made: a kernel's state is theirs
        pieces = [(p, r) for p, r, _ in _split_pieces(case)]
        calls = [r for _, r in pieces[:pieces.index((prop, rows)) + 1]] if (prop, rows) in pieces else [rows]
    for r in calls:
        xr, pr = ("x", "positions") if r == slice(0, x.shape[0]) else \
            (f"x[{r.start}:{r.stop}]", f"positions[..., {r.start}:{r.stop}]")
        lines.append(f"y = fn({xr}, {pr}, config)")
    if prop in (bb.NORM, bb.INVERSE, bb.RELATIVE):  # the property's own calls of fn
        lines[-1:] = [f"print(pe_suite.black_box.check(fn, x, positions, config, layout={case['layout']!r}))"]
        return "\n".join(lines)
    contract = f", contract={case['contract']!r}" if case.get("contract") else ""
    config = "config"
    if "xpos_scale_base" in case["config"]:  # no HF config states xPos: its keys go to check_rope as keywords
        config = ("{k: v for k, v in config.items() if not k.startswith('xpos_')}, " +
                  ", ".join(f"{k}=config[{k!r}]" for k in space.XPOS_KEYS if k in case["config"]))
    lines.append(f"print(pe_suite.check_rope({xr}, y, {pr}, hf_config={config}, layout={case['layout']!r}{contract}))")
    return "\n".join(lines)


def _imports(array):
    """The snippet's array module import and the constructor of its arrays."""
    return ("torch", "torch.tensor") if array == "torch" else ("numpy as np", "np.array")


def _describe(case):
    x = np.asarray(case["x"])
    s = case["config"].get("rope_scaling") or {}
    rotary = space.rotary_dim_of(case["config"])
    partial = f" (rotary_dim {rotary})" if rotary < case["config"]["head_dim"] else ""
    return (f"{case['dtype']}, {case['layout']}, rope_type {space.rope_type_of(case['config'])}, head_dim "
            f"{case['config']['head_dim']}{partial}, "
            f"{x.shape[0]} token(s) x {x.shape[1]} head(s), positions drawn as {case['scenario']}"
            f"{', M-RoPE ' + str(s['mrope_section']) if 'mrope_section' in s else ''}"
            f"{', axial ' + str(case['config']['rope_axes_dim']) if 'rope_axes_dim' in case['config'] else ''}")


def _diagnosis(caller, case):
    """The check engine's claims about the kernel's output for this case: (lines, list of claims)."""
    x, y, error = caller.call(case)
    if error or y is None:
        return [f"no output to diagnose ({error})"] if error else [], []
    report = _check(case, x, y)
    return _claims(report), report.explanations


def _rope_diagnosis(max_position, caller, minimal, found, original):
    """(claims, explanations, on what). The minimal case is too small to read a cause from (one row fits many
    conventions): the diagnosis reads a larger failing output of the same kernel under the failing case's config."""
    prop, text, rows = found
    claims, explanations, source = [], [], ""
    if prop == PASS_THROUGH:  # measured directly: no convention to fit
        claims, source = [f"measured: the kernel changes a pass-through channel ({text})"], "the minimal case"
    if prop in (PREFILL_DECODE, ROW_ALONE) and (claims := _state_claims(caller, minimal, prop, rows, original)):
        source = "the minimal case's calls, made again in order"
    start = min(int(np.min(np.asarray(minimal["positions"])[0] if minimal["form"] in ("mrope", "axial") else
                           minimal["positions"])), max(0, max_position - 48))
    # Llama-3's rule changes only the slow pairs (wavelengths past L/high_freq_factor), and a slow pair turns
    # measurably only at positions across the original context: spread positions first there, or a probe whose
    # fast pairs alone are determined fits "no scaling" (issue 54: original_max_position read as 8192 went
    # unnamed at 6 of 10 seeds). The other methods keep the drawn scenario first: their claims read there.
    spread_first = space.rope_type_of(original["config"]) == "llama3"
    scenarios = ("spread", original["scenario"]) if spread_first else (original["scenario"],)
    head_dims, declared = caller.limits.get("head_dims"), caller.limits.get("scenarios", space.SCENARIOS)
    # Only positions the caller declared the kernel takes: "spread" is scattered ("packed", "left_padding") and
    # reaches far offsets ("decode", "chunked", "crossing")
    far = any(s in declared for s in ("decode", "chunked", "crossing"))
    scattered = any(s in declared for s in ("packed", "left_padding"))
    probed = [s for s in dict.fromkeys(scenarios + ("chunked", "packed", "spread"))
              if s in declared or (s == "spread" and far and scattered)]
    probes = [(f"the failing config on 48 tokens x 4 heads, {scenario} positions",
               _probe(original, scenario, max_position, head_dims=head_dims)) for scenario in probed]
    probes.append(("the failing config on 48 tokens x 4 heads from the minimal case's first position",
                   _probe(original, original["scenario"], max_position, start=start, head_dims=head_dims)))
    if rows is not None:  # a split call's positions alone may be what fails (a boundary the whole call passes over)
        at = np.asarray(minimal["positions"])[..., rows].tolist()
        probes.append(("the failing call's positions on 4 heads",
                       _probe(original, None, max_position, at=at, head_dims=head_dims)))
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
    if not source:  # nothing larger fails: the failing call itself (for a split property, that call alone)
        claims, explanations = _diagnosis(caller, _rows(minimal, rows) if rows is not None else minimal)
        source = "the minimal case's failing call"
    return claims, explanations, source


def _state_claims(caller, case, prop, rows, original):
    """Under a length-dependent method (dynamic NTK, LongRoPE), whether a failing split call is the exact rotation
    under an earlier call's length instead of its own (HF's seq_len = max(position_ids) + 1, stated to the check as
    rope_scaling's seq_len), and passes when made first under a config the kernel has not met: the kernel kept
    that call's table. Measured on the split calls made again in order, as the kernel serves them; [] where none
    fits, or where the call fails made first too (a kernel that never switches: the probes name it)."""
    config = case["config"]
    pieces = _split_pieces(case)
    calls = [(p, r) for p, r, _ in pieces]
    if space.rope_type_of(config) not in space.LENGTH_DEPENDENT or (prop, rows) not in calls:
        return []
    upto = calls.index((prop, rows)) + 1
    outs, raised = _split_outputs(caller, case, pieces[:upto])
    if raised or len(outs) < upto:
        return []
    *earlier, (_, _, label, sub, xs, ys) = outs
    own = _length_of(sub)
    for _, _, before, sub_before, _, _ in reversed(earlier):
        n = _length_of(sub_before)
        keys = _native._rope_plan_lengths([own, n], hf_config=config, layout=case["layout"])
        if keys[0] == keys[1]:
            continue
        scaling = dict(config["rope_scaling"], seq_len=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = _verdict(_with(sub, config=dict(config, rope_scaling=scaling)), xs, ys)
        if report.passed and report.undecidable == 0:
            first = _made_first(caller, sub, max(config["head_dim"], original["config"]["head_dim"]))
            if first is None or not first[1]:  # a stateless kernel with a length rule of its own fits as well
                return []
            threshold = space.length_threshold(config)
            why = (f"rebuild it when the length crosses original_max_position_embeddings {threshold}"
                   if (own > threshold) != (n > threshold) else "a table kept from a longer call")
            alone = f"made first, under a config it had not met (head_dim {first[0]}), the call passes"
            return [f"measured: {label} (seq_len {own}: {_plan_words(config, own)}) is the exact rotation under seq_len "
                    f"{n}, the earlier call {before}'s ({_plan_words(config, n)}); {alone}: the kernel kept that "
                    f"call's table (its state is keyed without the length: {why})"]
    return []


def _made_first(caller, call, widest):
    """(head_dim d, whether the call passes) made first under its config at the first head_dim d past `widest` (the
    widest the run has drawn or shrunk to, so that a kernel keeping one table per config meets it afresh: its lists
    extended, x's new channels its own repeated) that the space allows, or None where none of the next eight does
    (of the caller's head_dims, where given: any of them past `widest`)."""
    head_dims = caller.limits.get("head_dims")
    sizes = range(widest + 2, widest + 18, 2) if head_dims is None else sorted(d for d in head_dims if d > widest)
    d, config = next(((d, c) for d in sizes
                      if (c := _at_head_dim(call["config"], d, lambda old, pairs: (old[0], old[1]))) is not None),
                     (None, None))
    if config is None:
        return None
    x = np.asarray(call["x"])
    x = np.tile(x, (1, 1, -(-d // x.shape[-1])))[..., :d]
    return d, _failure(caller, _with(call, config=config, x=x), only=AGREES) is None


def _length_of(case):
    """A call's length as HF reads it: max(position_ids) + 1."""
    return int(np.max(np.asarray(case["positions"]))) + 1


def _plan_words(config, length):
    """What a length-dependent method does at `length`, HF's reading: LongRoPE's list, dynamic NTK's base."""
    threshold = space.length_threshold(config)
    if space.rope_type_of(config) == "longrope":
        return f"{'long' if length > threshold else 'short'}_factor"
    return "rope_theta unscaled" if length <= threshold else f"the NTK base for length {length}"


def _probe(original, scenario, max_position, start=None, at=None, head_dims=None):
    """The failing case's config (widened to 64 channels when narrower than 32, or to the smallest of `head_dims`
    from 32, the sizes the kernel takes; kept where none is) and dtype on 48 tokens x 4 heads
    in a scenario (or at consecutive positions from `start`, the minimal case's first), or on 4 heads at the
    positions `at` (a failing call's own): enough rows and pairs for the check engine to read frequencies,
    positions, pairing and M-RoPE's axes back from the kernel's output."""
    config = original["config"]
    wide = 64 if head_dims is None or 64 in head_dims else min((d for d in head_dims if d >= 32), default=None)
    if config["head_dim"] < 32 and wide:  # the diagnosis reads frequencies and positions back from many pairs
        config = _at_head_dim(config, wide, lambda old, pairs: (max(1, round(old[0] * pairs / sum(old))),
                                                                max(1, round(old[1] * pairs / sum(old))))) or config
    if at is not None:
        x = np.random.default_rng(7).standard_normal((np.asarray(at).shape[-1], 4, config["head_dim"]))
        return _with(original, config=config, positions=at, x=_representable(x, original["dtype"]))
    rng = random.Random(f"probe:{json.dumps(config, sort_keys=True)}:{scenario}")
    if start is not None:
        positions = [start + k for k in range(48)]
    elif scenario == "spread":  # 0, 1, 2, 3, then geometric up to max_position: the slow pairs turn too
        positions = [0, 1, 2, 3]
        while len(positions) < 48:
            positions.append(max(positions[-1] + 1, round((max_position - 1) ** (len(positions) / 47))))
    else:
        positions = space.draw_positions(rng, scenario, 48, max_position)
    if "xpos_centre" in config and start is None:  # within xPos's reach of its centre (the minimal case's are)
        reach = space.xpos_reach(config)
        lo = max(0, config["xpos_centre"] - reach)
        positions = [lo + p % (config["xpos_centre"] + reach - lo + 1) for p in positions]
    if original["form"] in ("mrope", "axial"):  # axes apart and in no simple ratio: a halved frequency reads as no axis
        positions = [positions, [5 * p // 8 + 3 for p in positions], [3 * p // 13 + 1 for p in positions]]
    x = np.random.default_rng(7).standard_normal((48, 4, config["head_dim"]))
    return _with(original, config=config, positions=positions, scenario=scenario,
                 x=_representable(x, original["dtype"]))


# -- the tables: sinusoidal and ALiBi -----------------------------------------------------------------------------

def verify_sinusoidal(fn, *, examples=100, seed=None, dtypes=("float32",), layout="interleaved",
                      flip_sin_to_cos=False, downscale_freq_shift=0, scale=1.0, odd_dims=False,
                      scenarios=space.TABLE_SCENARIOS, max_position=1 << 21, grids=(2, 3), base_size=sw.DRAWN,
                      interpolation_scale=sw.DRAWN, temporal_interpolation_scale=sw.DRAWN, extra_tokens=sw.DRAWN,
                      array="torch", failure_file=DEFAULT_FAILURE_FILE, key=None):
    """Drives fn(positions, config) -> table [tokens, dim] through drawn cases. config states every switch:
    {"dim", "base", "dtype" (the table's width, its frequency base, the dtype to return), "layout",
    "flip_sin_to_cos", "downscale_freq_shift", "scale"} (diffusers' names, get_timestep_embedding's meaning).
    layout: "interleaved" (the paper's sin, cos pairs) or "concatenated" (all sines, then all cosines: fairseq,
    tensor2tensor, diffusers); flip_sin_to_cos (cos first), downscale_freq_shift (w_i = base^(-i/(dim/2 - S)))
    and scale (the angle S*t*w_i): each the kernel's fixed convention, or "drawn" (layouts both ways, flip both
    ways, shift 0 or 1, scale 1 or 1000), which the kernel must read from config. odd_dims: odd widths drawn
    too (the last channel a zero pad). positions [tokens]: int64 in a scenario (prefill, decode at an offset up
    to max_position, or max_position / scale under a scale above 1, chunked, packed, left padding), or with "timesteps" among scenarios float32 diffusion
    timesteps (integers 0..999, t*1000 or t for t in [0, 1)), checked as the real numbers stored.
    With "grid" among scenarios, grids too (diffusers' get_2d_sincos_pos_embed and get_3d_sincos_pos_embed):
    fn(grid, config) -> table [extra_tokens + cells, dim], grid a tuple (H, W) or (T, H, W) (grids: which of 2
    and 3 axes are drawn; sides up to 24, a video's up to 8x12x12), config as above plus the grid's values under
    diffusers' names: 2-D "base_size" (None: MAE's coordinates i), "interpolation_scale", "extra_tokens" (zero
    rows first); 3-D "interpolation_scale", "temporal_interpolation_scale". Each fixed (the kernel's) or
    "drawn" (sw.GRID_DRAWS). The rows: cells flattened (t,) h, w row-major; 2-D channels [w | h], 3-D
    [t D/4 | w 3D/8 | h 3D/8].
    Raises VerifyError (an AssertionError) with the smallest failing case and its diagnosis."""
    space.check_choices("dtypes", dtypes, TABLE_DTYPES)
    space.check_choices("scenarios", scenarios, sw.SCENARIOS)
    drawn = sw.switches(layout=layout, flip_sin_to_cos=flip_sin_to_cos,
                        downscale_freq_shift=downscale_freq_shift, scale=scale)
    widths = sw.dims(SINUSOIDAL_DIMS, drawn)
    grids, knobs = sw.grid_knobs(grids, base_size=base_size, interpolation_scale=interpolation_scale,
                                 temporal_interpolation_scale=temporal_interpolation_scale, extra_tokens=extra_tokens)
    shift = max(drawn["downscale_freq_shift"])
    grid_widths = {axes: [d for d in SINUSOIDAL_DIMS if sw.grid_dim_ok(axes, d, shift)] for axes in grids}
    space.check_array(array, dtypes)
    _check_max_position(max_position)
    _check_examples(examples)

    def draw(rng):
        dim = rng.choice(widths)
        base = 10000.0 if rng.random() < 0.7 else float(f"{math.exp(rng.uniform(4.6, 16.1)):.3g}")
        scenario = rng.choice(scenarios)
        tokens = rng.randint(1, 4) if scenario == "decode" else rng.randint(1, 64)
        dtype = rng.choice(dtypes)
        if scenario == sw.GRID:  # its own width: a grid's blocks are each even
            grid = sw.draw_grid(rng, grids, knobs)
            dim = rng.choice(grid_widths[len(grid["grid"])])
            # base 10000: get_1d_sincos_pos_embed_from_grid's constant (diffusers, MAE take none)
            config = dict({"dim": dim, "base": 10000.0, "dtype": dtype}, **sw.draw_switches(rng, drawn, dim), **grid)
            return {"config": config, "scenario": scenario, "positions": [], "dtype": dtype}
        if odd_dims and rng.random() < 0.5:  # the same pairs and one pad channel
            dim += 1
        config = dict({"dim": dim, "base": base, "dtype": dtype}, **sw.draw_switches(rng, drawn, dim))
        positions = sw.draw_positions(rng, scenario, tokens, _scaled_reach(max_position, config["scale"]))
        return {"config": config, "scenario": scenario, "positions": positions, "dtype": dtype}

    def probe(case):
        """The failing config, 64 channels or more, on 48 positions of its scenario, then from 0 (a scale of 1000
        at a large offset turns a float32 angle past what any pair can be read from)."""
        rng = random.Random(f"probe:{json.dumps(case['config'], sort_keys=True)}")
        c = dict(case["config"], dim=max(case["config"]["dim"], 64))
        if case["scenario"] == sw.GRID:  # the same grid, 64 channels where its width allows
            c["dim"] = c["dim"] if sw.grid_dim_ok(len(c["grid"]), c["dim"], c["downscale_freq_shift"]) else \
                case["config"]["dim"]
            return [("the failing config, larger", dict(case, config=c))]
        start = "timesteps" if case["scenario"] == sw.TIMESTEPS else "prefill"
        return [(f"the failing config, larger, {scenario} positions",
                 dict(case, config=c, scenario=scenario,
                      positions=sw.probe_positions(rng, scenario, 48, _scaled_reach(max_position, c["scale"]))))
                for scenario in dict.fromkeys((case["scenario"], start))]

    family = _Family(
        name="sinusoidal", shelf="sinusoidal", draw=draw, call=_call_sinusoidal,
        failure=functools.partial(_table_failure, _check_sinusoidal, _sinusoidal_splits),
        candidates=functools.partial(_sinusoidal_candidates, dtypes, odd_dims, drawn, knobs),
        diagnose=functools.partial(_table_diagnosis, _check_sinusoidal, probe),
        describe=_describe_sinusoidal, snippet=functools.partial(_sinusoidal_snippet, array),
        declared=functools.partial(sw.declared, drawn=drawn, dtypes=dtypes, scenarios=scenarios, odd_dims=odd_dims,
                                   grids=grids, knobs=knobs))
    return _run(family, fn, array, examples=examples, seed=seed, failure_file=failure_file, key=key)


def verify_alibi(fn, *, examples=100, seed=None, dtypes=("float32",), alibi_slopes="interpolated", max_bias=None,
                 array="torch", failure_file=DEFAULT_FAILURE_FILE, key=None):
    """Drives fn(config) -> slopes [num_attention_heads] through drawn configs: {"num_attention_heads",
    "max_bias", "dtype"} (heads from 1 to 128, powers of two and the others, whose slopes the paper, HF, ggml
    and vLLM interpolate: alibi_slopes="interpolated"; "direct" for the geometric rule at any head count).
    max_bias: None draws it (8, the paper's, most often); a number fixes it, for a kernel that hard-codes it
    (BLOOM's build_alibi_tensor: 8).
    Raises VerifyError (an AssertionError) with the smallest failing config and its diagnosis."""
    space.check_choices("dtypes", dtypes, TABLE_DTYPES)
    if alibi_slopes not in ("interpolated", "direct"):
        raise ValueError(f"alibi_slopes: expected 'interpolated' or 'direct'; got {alibi_slopes!r}")
    if max_bias is not None and (isinstance(max_bias, bool) or not isinstance(max_bias, (int, float))
                                 or not 0 < max_bias < math.inf):
        raise ValueError(f"max_bias: expected None (drawn) or a positive number; got {max_bias!r}")
    space.check_array(array, dtypes)
    _check_examples(examples)

    def draw(rng):
        heads = rng.choice(ALIBI_HEADS)
        bias = 8.0 if rng.random() < 0.7 else float(rng.choice((1, 2, 4, 6, 12, 16)))
        bias = bias if max_bias is None else float(max_bias)
        dtype = rng.choice(dtypes)
        return {"config": {"num_attention_heads": heads, "max_bias": bias, "dtype": dtype}, "dtype": dtype,
                "alibi_slopes": alibi_slopes}

    family = _Family(
        name="alibi", shelf="alibi", draw=draw, call=_call_alibi,
        failure=functools.partial(_table_failure, _check_alibi, lambda case: []),
        candidates=functools.partial(_alibi_candidates, dtypes, max_bias is None),
        diagnose=functools.partial(_table_diagnosis, _check_alibi, lambda case: []),
        describe=_describe_alibi, snippet=_alibi_snippet,
        declared=lambda c: c.get("dtype") in dtypes and c.get("alibi_slopes") == alibi_slopes and (
            max_bias is None or c.get("config", {}).get("max_bias") == float(max_bias)))
    return _run(family, fn, array, examples=examples, seed=seed, failure_file=failure_file, key=key)


def _table_worst(report):
    w = report.worst[0] if report.worst else None
    if not w:
        return str(report).strip().splitlines()[-1]
    where = ", ".join(f"{k} {w[k]}" for k in ("row", "head", "query", "key", "position", "channel") if k in w)
    return (f"{where}: got {w.get('value')!r}, exact {w.get('exact')!r}, error {_number(w.get('abs_error'))} > "
            f"budget {_number(w.get('budget'))}")


def _scaled_reach(max_position, scale):
    """The largest token position drawn under a scale: max_position / |scale| above 1 (at least 64, the
    scenarios' least), so that scale·p stays within max_position, where the float32 contracts promise (2^24):
    past it every element is undecidable and a case could not fail. A scaled model's positions are small (SD3,
    Flux: t in [0, 1) times 1000)."""
    return max(64, int(max_position / max(1.0, abs(scale))))


def _table_failure(check, splits, caller, case, only=None):
    """(property, text, the failing part case or None) of the first property a table breaks, else None: the split
    calls (made first, in order), then the whole call's agreement, the first split that failed, the same bits."""
    def wanted(p):
        return only is None or only == p

    split_failure = None
    if wanted(PREFILL_DECODE):
        for part in splits(case):
            _, y, error = caller.call(part)
            report = None if error else check(part, y)
            if error or not report.passed:
                split_failure = (PREFILL_DECODE, error or _table_worst(report), part)
                break
    _, y, error = caller.call(case)
    if error:
        return TABLE_RAISED, error, None
    if wanted(AGREES):
        report = check(case, y)
        if not report.passed:
            return AGREES, _table_worst(report), None
    if split_failure:
        return split_failure
    return _twice(caller, case, y) if wanted(DETERMINISTIC) else None


def _table_diagnosis(check, probe, caller, minimal, found, original):
    """(claims, explanations, on what): the first failing output that fits a claim of the larger cases (probe's:
    [(what, case)]), the case as drawn and the minimal case's failing call."""
    claims, explanations, source = [], [], ""
    for what, case in probe(original) + [("the case as first drawn", original),
                                         ("the minimal case's failing call", found[2] or minimal)]:
        if claims or case is None:
            continue
        _, y, error = caller.call(case)
        if error:
            claims, source = [f"no output to diagnose ({error})"], what
            break
        report = check(case, y)
        if report.passed:
            continue
        claims, explanations, source = _claims(report), report.explanations, what
    return claims, explanations, source


def _call_sinusoidal(fn, case, array):
    """(None, a copy of the table, None) or (None, None, what went wrong): a table has no input x. Positions
    int64, timesteps float32 (as diffusion pipelines pass them; every drawn one exact in float32)."""
    p, c = case["positions"], case["config"]
    if case["scenario"] == sw.GRID:
        return (None,) + _call_grid(fn, c, array)
    dtype = "float32" if case["scenario"] == sw.TIMESTEPS else "int64"
    given = _torch().tensor(p, dtype=getattr(_torch(), dtype)) if array == "torch" else np.asarray(p, dtype)
    return (None,) + _called(fn, (given, dict(c)), array, (len(p), c["dim"]), c["dtype"])


def _call_grid(fn, c, array):
    """fn(grid, config): (the table, None) or (None, what went wrong), a table of the grid's cells alone where its
    extra tokens were asked for named so."""
    returned = {}

    def recording(*args):
        y = fn(*args)
        returned["rows"] = (tuple(getattr(y, "shape", ())) or (None,))[0]
        return y

    y, error = _called(recording, (tuple(c["grid"]), dict(c)), array, (sw.grid_rows(c), c["dim"]), c["dtype"])
    extra = c.get("extra_tokens", 0)
    if error and extra and returned.get("rows") == math.prod(c["grid"]):
        error += (f": the grid's {math.prod(c['grid'])} cells without its extra_tokens {extra} zero rows (first): "
                  f"the extra tokens are missing")
    return y, error


def _sinusoidal_keywords(config):
    """check_sinusoidal's keywords for the case's config: every switch stated, the kernel's fixed ones too (a
    grid's sizes and values)."""
    words = {k: config[k] for k in ("base", "layout", "flip_sin_to_cos", "downscale_freq_shift", "scale")}
    if "grid" in config:
        words["grid"] = list(config["grid"])
        words.update({k: config[k] for k in sw.GRID_KEYS[len(config["grid"])]})
    return words


def _check_sinusoidal(case, y):
    if case["scenario"] == sw.GRID:  # the rows are the grid's cells
        return _native.check_sinusoidal(y, None, **_sinusoidal_keywords(case["config"]))
    real = case["scenario"] == sw.TIMESTEPS  # a float array: real positions, exact as stored
    positions = np.asarray(case["positions"], dtype=np.float64 if real else np.int64)
    return _native.check_sinusoidal(y, positions, **_sinusoidal_keywords(case["config"]))


def _sinusoidal_splits(case):
    if case["scenario"] == sw.GRID:  # a grid is built whole: no prefill and decode
        return []
    return [dict(case, positions=case["positions"][r]) for r, _ in _prefill_then_steps(len(case["positions"]))]


def _sinusoidal_candidates(dtypes, odd_dims, drawn, knobs, case):
    """Smaller cases, the switches kept (a drawn one last tried at the paper's value); a grid stays a grid."""
    c, p = case["config"], case["positions"]
    if c["dtype"] != "float32" and "float32" in dtypes:
        yield dict(case, config=dict(c, dtype="float32"), dtype="float32")
    if case["scenario"] == sw.GRID:
        yield from sw.smaller_grids(case, knobs)
        yield from (dict(case, config=dict(c, dim=d)) for d in range(4, c["dim"])
                    if sw.grid_dim_ok(len(c["grid"]), d, c["downscale_freq_shift"]))
        if c["base"] != 10000.0:
            yield dict(case, config=dict(c, base=10000.0))
        yield from sw.simpler_switches(case, drawn)
        return
    yield from _fewer_rows(len(p), lambda rows: dict(case, positions=p[rows]))
    for d in range(2, c["dim"]):
        if sw.valid_dim(c, d, odd_dims):
            yield dict(case, config=dict(c, dim=d))
    yield from _smaller_positions(case)
    yield from sw.integer_timesteps(case)
    if c["base"] != 10000.0:
        yield dict(case, config=dict(c, base=10000.0))
    yield from sw.simpler_switches(case, drawn)


def _sinusoidal_snippet(array, case, found):
    case, (mod, ctor) = found[2] or case, _imports(array)
    typed = f", dtype={mod.split()[-1]}.float32" if case["scenario"] == sw.TIMESTEPS else ""
    words = ", ".join(f"{k}={v!r}" for k, v in _sinusoidal_keywords(case["config"]).items())
    if case["scenario"] == sw.GRID:
        return (f"import {mod}\nimport pe_suite\nconfig = {case['config']!r}\n"
                f"table = fn({tuple(case['config']['grid'])!r}, config)\n"
                f"print(pe_suite.check_sinusoidal(table, None, {words}))")
    return (f"import {mod}\nimport pe_suite\nconfig = {case['config']!r}\n"
            f"positions = {ctor}({case['positions']}{typed})\ntable = fn(positions, config)\n"
            f"print(pe_suite.check_sinusoidal(table, positions, {words}))")


def _describe_sinusoidal(case):
    c = case["config"]
    if case["scenario"] == sw.GRID:
        values = ", ".join(f"{k} {c[k]}" for k in sw.GRID_KEYS[len(c["grid"])])
        return (f"{c['dtype']}, {c['layout']}, dim {c['dim']}, base {c['base']:g}, flip_sin_to_cos "
                f"{c['flip_sin_to_cos']}, downscale_freq_shift {c['downscale_freq_shift']:g}, scale {c['scale']:g}, "
                f"grid {'x'.join(map(str, c['grid']))}, {values}, drawn as grid")
    return (f"{c['dtype']}, {c['layout']}, dim {c['dim']}, base {c['base']:g}, flip_sin_to_cos "
            f"{c['flip_sin_to_cos']}, downscale_freq_shift {c['downscale_freq_shift']:g}, scale {c['scale']:g}, "
            f"{len(case['positions'])} position(s), drawn as {case['scenario']}")


def _call_alibi(fn, case, array):
    c = case["config"]
    return (None,) + _called(fn, (dict(c),), array, (c["num_attention_heads"],), c["dtype"])


def _check_alibi(case, y):
    return _native.check_alibi(y, max_bias=case["config"]["max_bias"], alibi_slopes=case["alibi_slopes"])


def _alibi_candidates(dtypes, drawn_bias, case):
    c = case["config"]
    if c["dtype"] != "float32" and "float32" in dtypes:
        yield dict(case, config=dict(c, dtype="float32"), dtype="float32")
    for h in range(1, c["num_attention_heads"]):
        yield dict(case, config=dict(c, num_attention_heads=h))
    if drawn_bias and c["max_bias"] != 8.0:
        yield dict(case, config=dict(c, max_bias=8.0))


def _alibi_snippet(case, found):
    case = found[2] or case
    return (f"import pe_suite\nconfig = {case['config']!r}\nslopes = fn(config)\nprint(pe_suite.check_alibi("
            f"slopes, max_bias={case['config']['max_bias']!r}, alibi_slopes={case['alibi_slopes']!r}))")


def _describe_alibi(case):
    c = case["config"]
    return f"{c['dtype']}, {c['num_attention_heads']} head(s), max_bias {c['max_bias']:g}"

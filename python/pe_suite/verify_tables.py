"""verify_sinusoidal and verify_alibi: verify_rope's experience for the encodings that are tables, not
rotations of an input. The kernel computes the table from a config (and, for sinusoidal, positions); each
drawn case is checked against the exact reference (check_sinusoidal, check_alibi: the data's precision class
by default), asked for the same bits twice and, for sinusoidal, for the same agreement when its positions
are served as a prefill and decode steps; a failure is shrunk, reported with a runnable snippet and the check
engine's diagnosis of a larger failing output, kept in the failure file and replayed first."""
import json
import math
import os
import random

import numpy as np

from . import _native
from . import config_space as space
from .verify import DEFAULT_FAILURE_FILE, DEFAULT_SEED, VerifyError, _name, _Store

AGREES = "agrees with the exact reference within the data's precision class"
DETERMINISTIC = "the same call gives the same bits twice"
PREFILL_DECODE = "a prefill then decode steps agree with the exact reference, call by call"
RAISED = "returns a table of the shape and dtype asked for"
TABLE_DTYPES = ("float32", "bfloat16", "float16", "float64")
SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")
# Table widths engines use (512, 768, 1024 for the original Transformer and BERT-likes) and small ones with tails.
SINUSOIDAL_DIMS = (2, 4, 6, 8, 10, 16, 18, 32, 34, 64, 128, 130, 256, 512, 768, 1024)
# Head counts with ALiBi (BLOOM 16..112, MPT 32..64) and the non-powers of two whose slopes are interpolated.
ALIBI_HEADS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 71, 80, 96, 112, 128)


def _torch():
    import torch
    return torch


def _to_array(values, dtype, array):
    if array == "torch":
        torch = _torch()
        return torch.tensor(values, dtype={"float32": torch.float32, "bfloat16": torch.bfloat16,
                                           "float16": torch.float16, "float64": torch.float64}.get(dtype, torch.int64))
    return np.asarray(values, dtype=dtype)


def _output(y, dtype, shape, array):
    """(a copy of y, None) or (None, what is wrong with it)."""
    if array == "torch":
        if not hasattr(y, "detach"):
            return None, f"fn returned {type(y).__module__}.{type(y).__name__}; want a torch tensor"
        y = y.detach().cpu().clone()
        got = str(y.dtype).replace("torch.", "")
    else:
        if not isinstance(y, np.ndarray):
            return None, f"fn returned {type(y).__module__}.{type(y).__name__}; want a numpy array"
        y = np.array(y, copy=True)
        got = y.dtype.name
    if tuple(y.shape) != tuple(shape) or got != dtype:
        return None, f"fn returned shape {tuple(y.shape)} {got}; want {tuple(shape)} {dtype}"
    return y, None


def _bits(a):
    if hasattr(a, "detach"):
        torch = _torch()
        return a.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]).numpy()
    return np.ascontiguousarray(a).view({2: np.int16, 4: np.int32, 8: np.int64}[a.itemsize])


class _Family:
    """What verify_sinusoidal and verify_alibi differ in."""

    def __init__(self, name, draw, call, check, candidates, snippet, describe, probe, splits):
        self.name, self.draw, self.call, self.check = name, draw, call, check
        self.candidates, self.snippet, self.describe, self.probe, self.splits = \
            candidates, snippet, describe, probe, splits


def _failure(family, fn, case, only=None):
    def wanted(p):
        return only is None or only == p

    split_failure = None
    if wanted(PREFILL_DECODE):
        for part in family.splits(case):
            y, error = family.call(fn, part)
            report = None if error else family.check(part, y)
            if error or not report.passed:
                split_failure = (PREFILL_DECODE, error or _worst(report), part)
                break
    y, error = family.call(fn, case)
    if error:
        return RAISED, error, None
    if wanted(AGREES):
        report = family.check(case, y)
        if not report.passed:
            return AGREES, _worst(report), None
    if split_failure:
        return split_failure
    if wanted(DETERMINISTIC):
        y2, error = family.call(fn, case)
        if error or not np.array_equal(_bits(y), _bits(y2)):
            return DETERMINISTIC, error or "a second call of the same inputs gave other bits", None
    return None


def _worst(report):
    w = report.worst[0] if report.worst else None
    if not w:
        return str(report).strip().splitlines()[-1]
    where = ", ".join(f"{k} {w[k]}" for k in ("row", "head", "query", "key", "position", "channel") if k in w)
    return (f"{where}: got {w.get('value')!r}, exact {w.get('exact')!r}, error {w.get('abs_error', 0):.3g} > "
            f"budget {w.get('budget', 0):.3g}")


def _same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _run(family, fn, *, examples, seed, failure_file, key, array, declared, draw_args):
    if not isinstance(examples, int) or examples < 1:
        raise ValueError(f"examples: expected a positive integer; got {examples!r}")
    if seed is None:
        seed = int(os.environ.get("PE_SUITE_SEED", DEFAULT_SEED))
    key = f"{key or _name(fn)}/{family.name}/{array}"
    store = _Store(failure_file)
    for kept in store.cases(key):
        if not declared(kept):
            continue
        found = _failure(family, fn, kept)
        if found:
            _raise(family, fn, kept, found, kept, 0, f"replayed from {failure_file}", store, key)
        store.forget(key, kept)
    counts = {}
    for i in range(examples):
        case = family.draw(random.Random(f"{seed}:{i}"), **draw_args)
        counts[case["dtype"]] = counts.get(case["dtype"], 0) + 1
        found = _failure(family, fn, case)
        if not found:
            continue
        minimal, steps, budget, progress = case, 0, 400, True
        while progress and budget > 0:
            progress = False
            for candidate in family.candidates(minimal):
                if _same(candidate, minimal):
                    continue
                budget -= 1
                if budget <= 0:
                    break
                again = _failure(family, fn, candidate, only=found[0])
                if again and again[0] == found[0]:
                    minimal, steps, progress = candidate, steps + 1, True
                    break
        again = _failure(family, fn, minimal, only=found[0])
        if again is None:
            minimal, steps = case, 0
            found = (found[0], found[1] + " (the smaller cases did not fail when run again: the kernel's output "
                     "depends on its earlier calls)", found[2])
        _raise(family, fn, minimal, again or found, case, steps, f"seed {seed}, case {i + 1} of {examples}",
               store, key)
    return {"examples": examples, "seed": seed, "cases": counts}


def _raise(family, fn, minimal, found, original, steps, origin, store, key):
    prop, text, part = found
    claims, explanations, source = [], [], ""
    for what, case in (("the failing config, larger", family.probe(original)), ("the case as first drawn", original),
                       ("the minimal case's failing call", part or minimal)):
        if claims or case is None:
            continue
        y, error = family.call(fn, case)
        if error:
            claims, source = [f"no output to diagnose ({error})"], what
            break
        report = family.check(case, y)
        if report.passed:
            continue
        claims = [f"the data fits: {e['fits']} ({e['support']})" for e in report.explanations]
        explanations, source = report.explanations, what
    store.keep(key, minimal)
    lines = [f"pe_suite.verify_{family.name}: {prop}: FAILED ({origin}; shrunk in {steps} steps)",
             f"  failure: {text}",
             f"  minimal case: {family.describe(minimal)}",
             "    " + family.snippet(part or minimal).replace("\n", "\n    "),
             f"  diagnosis{' (the kernel on ' + source + ')' if source else ''}:"]
    lines += [f"    {c}" for c in claims] or ["    undetermined: no convention the check engine knows fits the output"]
    raise VerifyError("\n".join(lines), prop, minimal, explanations)


# -- sinusoidal -------------------------------------------------------------------------------------------------

def verify_sinusoidal(fn, *, examples=100, seed=None, dtypes=("float32",), layout="interleaved",
                      scenarios=space.SCENARIOS, max_position=1 << 21, array="torch",
                      failure_file=DEFAULT_FAILURE_FILE, key=None):
    """Drives fn(positions, config) -> table [tokens, dim] through drawn cases: config {"dim", "base",
    "dtype"} (the table's width, its frequency base, the dtype to return), positions [tokens] in a scenario
    (prefill, decode at an offset up to max_position, chunked, packed, left padding). layout: "interleaved"
    (the paper's sin, cos pairs) or "concatenated" (all sines, then all cosines: fairseq, tensor2tensor).
    Raises VerifyError (an AssertionError) with the smallest failing case and its diagnosis."""
    space.check_choices("dtypes", dtypes, TABLE_DTYPES)
    space.check_choices("scenarios", scenarios, space.SCENARIOS)
    if layout not in SINUSOIDAL_LAYOUTS:
        raise ValueError(f"layout: expected one of {', '.join(SINUSOIDAL_LAYOUTS)}; got {layout!r}")
    space.check_array(array, dtypes)
    if not isinstance(max_position, int) or max_position < 64:
        raise ValueError(f"max_position: expected an integer >= 64; got {max_position!r}")

    def draw(rng):
        dim = rng.choice(SINUSOIDAL_DIMS)
        base = 10000.0 if rng.random() < 0.7 else float(f"{math.exp(rng.uniform(4.6, 16.1)):.3g}")
        scenario = rng.choice(scenarios)
        tokens = rng.randint(1, 4) if scenario == "decode" else rng.randint(1, 64)
        dtype = rng.choice(dtypes)
        return {"config": {"dim": dim, "base": base, "dtype": dtype}, "layout": layout, "scenario": scenario,
                "positions": space.draw_positions(rng, scenario, tokens, max_position), "dtype": dtype}

    def call(f, case):
        positions = _to_array(case["positions"], "int64", array)
        try:
            y = f(positions, dict(case["config"]))
        except Exception as e:  # noqa: BLE001 -- the kernel's own error is the finding
            return None, f"fn raised {type(e).__name__}: {e}"
        return _output(y, case["config"]["dtype"], (len(case["positions"]), case["config"]["dim"]), array)

    def check(case, y):
        return _native.check_sinusoidal(y, np.asarray(case["positions"], dtype=np.int64),
                                        base=case["config"]["base"], layout=case["layout"])

    def candidates(case):
        c, p = case["config"], case["positions"]
        if c["dtype"] != "float32" and "float32" in dtypes:
            yield dict(case, config=dict(c, dtype="float32"), dtype="float32")
        if len(p) > 1:
            for t in range(min(len(p), 8)):
                yield dict(case, positions=[p[t]])
            yield dict(case, positions=p[: len(p) // 2])
            yield dict(case, positions=p[len(p) // 2:])
        for d in range(2, c["dim"], 2):
            yield dict(case, config=dict(c, dim=d))
        for k in range(len(p)):
            for value in (0, 1):
                if p[k] > value:
                    yield dict(case, positions=p[:k] + [value] + p[k + 1:])
        if p and max(p) > 1:
            yield dict(case, positions=[q // 2 for q in p])
        if c["base"] != 10000.0:
            yield dict(case, config=dict(c, base=10000.0))

    def snippet(case):
        mod, ctor = ("torch", "torch.tensor") if array == "torch" else ("numpy as np", "np.array")
        return (f"import {mod}\nimport pe_suite\nconfig = {case['config']!r}\npositions = {ctor}({case['positions']})\n"
                f"table = fn(positions, config)\nprint(pe_suite.check_sinusoidal(table, positions, base={case['config']['base']!r}, "
                f"layout={case['layout']!r}))")

    def describe(case):
        c = case["config"]
        return (f"{c['dtype']}, {case['layout']}, dim {c['dim']}, base {c['base']:g}, {len(case['positions'])} "
                f"position(s), drawn as {case['scenario']}")

    def probe(case):
        rng = random.Random(f"probe:{json.dumps(case['config'], sort_keys=True)}")
        c = dict(case["config"], dim=max(case["config"]["dim"], 64))
        return dict(case, config=c, positions=space.draw_positions(rng, case["scenario"], 48, max_position))

    def splits(case):
        p = case["positions"]
        if len(p) < 2:
            return []
        cut = max(1, len(p) - 2)
        return [dict(case, positions=p[:cut])] + [dict(case, positions=[q]) for q in p[cut:]]

    family = _Family("sinusoidal", draw, call, check, candidates, snippet, describe, probe, splits)

    def declared(c):
        return c.get("layout") == layout and c.get("dtype") in dtypes and c.get("scenario") in scenarios

    return _run(family, fn, examples=examples, seed=seed, failure_file=failure_file, key=key, array=array,
                declared=declared, draw_args={})


# -- ALiBi --------------------------------------------------------------------------------------------------------

def verify_alibi(fn, *, examples=100, seed=None, dtypes=("float32",), alibi_slopes="interpolated", array="torch",
                 failure_file=DEFAULT_FAILURE_FILE, key=None):
    """Drives fn(config) -> slopes [num_attention_heads] through drawn configs: {"num_attention_heads",
    "max_bias", "dtype"} (heads from 1 to 128, powers of two and the others, whose slopes the paper, HF, ggml
    and vLLM interpolate: alibi_slopes="interpolated"; "direct" for the geometric rule at any head count).
    Raises VerifyError (an AssertionError) with the smallest failing config and its diagnosis."""
    space.check_choices("dtypes", dtypes, TABLE_DTYPES)
    if alibi_slopes not in ("interpolated", "direct"):
        raise ValueError(f"alibi_slopes: expected 'interpolated' or 'direct'; got {alibi_slopes!r}")
    space.check_array(array, dtypes)

    def draw(rng):
        heads = rng.choice(ALIBI_HEADS)
        max_bias = 8.0 if rng.random() < 0.7 else float(rng.choice((1, 2, 4, 6, 12, 16)))
        dtype = rng.choice(dtypes)
        return {"config": {"num_attention_heads": heads, "max_bias": max_bias, "dtype": dtype}, "dtype": dtype,
                "alibi_slopes": alibi_slopes}

    def call(f, case):
        try:
            y = f(dict(case["config"]))
        except Exception as e:  # noqa: BLE001 -- the kernel's own error is the finding
            return None, f"fn raised {type(e).__name__}: {e}"
        return _output(y, case["config"]["dtype"], (case["config"]["num_attention_heads"],), array)

    def check(case, y):
        return _native.check_alibi(y, max_bias=case["config"]["max_bias"], alibi_slopes=case["alibi_slopes"])

    def candidates(case):
        c = case["config"]
        if c["dtype"] != "float32" and "float32" in dtypes:
            yield dict(case, config=dict(c, dtype="float32"), dtype="float32")
        for h in range(1, c["num_attention_heads"]):
            yield dict(case, config=dict(c, num_attention_heads=h))
        if c["max_bias"] != 8.0:
            yield dict(case, config=dict(c, max_bias=8.0))

    def snippet(case):
        return (f"import pe_suite\nconfig = {case['config']!r}\nslopes = fn(config)\nprint(pe_suite.check_alibi("
                f"slopes, max_bias={case['config']['max_bias']!r}, alibi_slopes={case['alibi_slopes']!r}))")

    def describe(case):
        c = case["config"]
        return f"{c['dtype']}, {c['num_attention_heads']} head(s), max_bias {c['max_bias']:g}"

    family = _Family("alibi", draw, call, check, candidates, snippet, describe, lambda case: None, lambda case: [])

    def declared(c):
        return c.get("dtype") in dtypes and c.get("alibi_slopes") == alibi_slopes

    return _run(family, fn, examples=examples, seed=seed, failure_file=failure_file, key=key, array=array,
                declared=declared, draw_args={})

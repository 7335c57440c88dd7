#!/usr/bin/env python3
"""The conformance matrix: every row (engines/rows/*.py) run through its verify_* driver, recorded per (engine,
version, function, encoding, variant, dtype) as its verdict, the worst error over budget and the largest position
reached, written to engines/matrix.json and rendered into docs/engines.md.

    python engines/conformance.py --out engines/matrix.json --markdown docs/engines.md   # run and write
    python engines/conformance.py --out new.json --compare engines/matrix.json          # exit 1 on a changed verdict

A failing row keeps the driver's own message (the property, the minimal case as a snippet, the diagnosis): a
discrepancy is reported, never hidden by a looser budget. A row whose engine does not import is SKIP with the
import's error."""
import argparse
import importlib.metadata
import json
import pathlib
import sys
import time
import traceback
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pe_suite  # noqa: E402

from engines import matrix  # noqa: E402
from engines.recorder import Recorder  # noqa: E402
from engines.rows import all_rows  # noqa: E402

DRIVERS = {"rope": pe_suite.verify_rope, "sinusoidal": pe_suite.verify_sinusoidal, "alibi": pe_suite.verify_alibi}


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_row(row, seed):
    """The row's record (matrix.py's schema)."""
    record = {"engine": row.engine, "version": _version(row.engine), "what": row.what, "encoding": row.encoding,
              "variant": row.variant, "dtype": row.dtype, "worst": None, "max_position": None, "cases": 0,
              "unchecked": 0, "warnings": [], "seconds": 0.0, "detail": "", "note": row.note}
    missing = [d for d in (row.engine,) + tuple(row.requires) if _version(d) is None]
    if missing:
        return dict(record, verdict="SKIP", detail=f"not installed: {', '.join(missing)}")
    start = time.perf_counter()
    try:
        fn = row.kernel()
    except Exception as e:  # the engine's module did not import or build: the row cannot run here
        return dict(record, verdict="SKIP", detail=f"{type(e).__name__}: {e}".splitlines()[0][:300],
                    seconds=round(time.perf_counter() - start, 1))
    recorder = Recorder(row.encoding, fn, row.verify)
    words = dict(row.verify, examples=row.examples, seed=seed, failure_file=None, dtypes=(row.dtype,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            DRIVERS[row.encoding](recorder, **words)
            verdict, detail = "PASS", ""
        except pe_suite.verify.VerifyError as e:
            verdict, detail = "FAIL", str(e)
        except Exception:  # the driver itself raised: a defect of the row or of pe-suite, shown whole
            verdict, detail = "ERROR", traceback.format_exc(limit=4)
    # pe-suite's own warnings (a config key the check did not read, cases it could not judge); the engines' are theirs
    ours = sorted({str(w.message).splitlines()[0][:300] for w in caught
                   if str(w.message).startswith(("verify_", "pe_suite"))})
    return dict(record, verdict=verdict, detail=detail, worst=matrix.finite(recorder.worst), cases=recorder.calls,
                unchecked=recorder.unchecked, warnings=ours, max_position=recorder.max_position,
                seconds=round(time.perf_counter() - start, 1))


def render(out, markdown):
    """The records' notes from the rows as they are now, the schema's defaults filled in, and the page rendered."""
    notes = {row.key: row.note for row in all_rows()}
    document = json.loads(pathlib.Path(out).read_text())
    for record in document["rows"]:
        record.setdefault("unchecked", 0)
        record.setdefault("warnings", [])
        record["note"] = notes.get(matrix.key(record), record.get("note", ""))
    pathlib.Path(out).write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
    if markdown:
        pathlib.Path(markdown).write_text(matrix.markdown(document))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where the records go (JSON)")
    ap.add_argument("--markdown", help="the page to render them into (docs/engines.md)")
    ap.add_argument("--compare", help="a matrix.json whose verdicts must be this run's (exit 1 where one changed)")
    ap.add_argument("--only", default="", help="run the rows whose key contains this text")
    ap.add_argument("--seed", type=int, default=pe_suite.verify.DEFAULT_SEED)
    ap.add_argument("--render", action="store_true", help="run no engine: re-render --markdown from the records in "
                    "--out with the rows' current notes (a note is documentation, not a measurement)")
    args = ap.parse_args(argv)
    if args.render:
        return render(args.out, args.markdown)
    records = []
    for row in all_rows():
        if args.only not in row.key:
            continue
        record = run_row(row, args.seed)
        records.append(record)
        print(matrix.line(record), flush=True)
    document = {"schema": matrix.SCHEMA, "seed": args.seed, "python": sys.version.split()[0],
                "pe_suite": pe_suite.__version__, "rows": records}
    pathlib.Path(args.out).write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
    if args.markdown:
        pathlib.Path(args.markdown).write_text(matrix.markdown(document))
    if args.compare:
        old = json.loads(pathlib.Path(args.compare).read_text())
        changed = matrix.changes(old, document) if args.only else matrix.changes_all(old, document)
        for c in changed:
            print(f"verdict changed: {c}")
        if changed:
            print(f"{len(changed)} row(s) changed against {args.compare}: a real change in an engine is recorded by "
                  f"rerunning with --out {args.compare} --markdown docs/engines.md and committing both")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The matrix's bookkeeping, without the engines: a changed verdict, a lost row and a new row are each reported (the
leg's gate can fail), the checked-in page is the checked-in records rendered, and the records cover the ten engines
the issue asks for in float32 and bfloat16."""
import copy
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engines import matrix  # noqa: E402


def record(engine="e", verdict="PASS", dtype="float32", **more):
    return dict({"engine": engine, "version": "1", "what": "f", "encoding": "rope", "variant": "default",
                 "dtype": dtype, "verdict": verdict, "worst": 0.5, "max_position": 10.0, "cases": 3, "seconds": 0.1,
                 "unchecked": 0, "warnings": [], "detail": "", "note": ""}, **more)


def document(*rows):
    return {"schema": matrix.SCHEMA, "seed": 1, "python": "3", "pe_suite": "0", "rows": list(rows)}


def test_the_same_verdicts_are_no_change():
    old = document(record(), record(dtype="bfloat16", verdict="FAIL"))
    assert matrix.changes_all(old, copy.deepcopy(old)) == []


def test_a_changed_verdict_a_lost_row_and_a_new_row_are_each_reported():
    old = document(record(), record(dtype="bfloat16"), record(engine="gone"))
    new = document(record(verdict="FAIL"), record(dtype="bfloat16"), record(engine="new"))
    changed = matrix.changes_all(old, new)
    assert any("PASS -> FAIL" in c and "float32" in c for c in changed)
    assert any(c.startswith("new |") and "new row" in c for c in changed)
    assert any(c.startswith("gone |") and "missing" in c for c in changed)
    assert len(changed) == 3


def test_a_version_change_alone_is_not_a_verdict_change():
    old = document(record())
    assert matrix.changes_all(old, document(record(version="2", worst=0.9))) == []


def test_a_failure_is_shown_with_its_note_and_its_long_lines_cut():
    long_line = "x = torch.tensor([" + "0.1, " * 400 + "])"
    page = matrix.markdown(document(record(verdict="FAIL", detail=f"property: FAILED\n{long_line}\ndiagnosis",
                                           note="Measured: the cause.")))
    assert "## Findings" in page and "Measured: the cause." in page and "property: FAILED" in page
    assert long_line not in page and f"({len(long_line)} characters" in page
    assert max(len(line) for line in page.splitlines() if line.startswith("x = ")) <= matrix.LONG + 80


def test_calls_not_checked_again_and_warnings_are_shown_and_an_infinite_ratio_is_json():
    page = matrix.markdown(document(record(unchecked=2, cases=9, warnings=["pe_suite: factr is not read"]),
                                    record(dtype="bfloat16", worst=matrix.finite(float("inf")), verdict="FAIL")))
    assert "2 of 9 calls could not be checked again" in page and "factr is not read" in page
    assert "| inf |" in page
    json.dumps(document(record(worst=matrix.finite(float("inf")))), allow_nan=False)


def test_a_row_whose_every_call_raised_shows_no_numbers():
    page = matrix.markdown(document(record(verdict="FAIL", cases=0, worst=0.0, max_position=0.0, note="n")))
    assert "| **FAIL** | - | - | 0 |" in page


def test_render_refreshes_the_notes_and_the_schema_without_running_an_engine(tmp_path):
    from engines import conformance
    stale = record(engine="liger-kernel", what="LigerRopeFunction (Triton, interpreted)", variant="default",
                   dtype="bfloat16", verdict="FAIL", note="stale")
    del stale["unchecked"], stale["warnings"]
    out, page = tmp_path / "m.json", tmp_path / "m.md"
    out.write_text(json.dumps(document(stale)))
    assert conformance.main(["--out", str(out), "--markdown", str(page), "--render"]) == 0
    rendered = json.loads(out.read_text())["rows"][0]
    assert rendered["verdict"] == "FAIL" and rendered["note"].startswith("Measured: Triton's interpreter")
    assert rendered["unchecked"] == 0 and rendered["warnings"] == []
    assert rendered["note"] in page.read_text()


def test_the_checked_in_page_is_the_checked_in_records():
    records = json.loads((ROOT / "engines" / "matrix.json").read_text())
    assert (ROOT / "docs" / "engines.md").read_text() == matrix.markdown(records)


def test_the_records_cover_ten_engines_run_in_float32_and_bfloat16():
    records = json.loads((ROOT / "engines" / "matrix.json").read_text())
    assert records["schema"] == matrix.SCHEMA
    ran = [r for r in records["rows"] if r["verdict"] in ("PASS", "FAIL")]
    engines = {r["engine"] for r in ran}
    assert len(engines) >= 10, engines
    for engine in engines:
        dtypes = {r["dtype"] for r in ran if r["engine"] == engine}
        assert "float32" in dtypes, engine
    assert len({r["engine"] for r in ran if r["dtype"] == "bfloat16"}) >= 10
    # every failing or skipped row says what it was measured to come from
    assert all("unchecked" in r and "warnings" in r for r in records["rows"])
    assert all(r["note"] for r in records["rows"] if r["verdict"] in ("FAIL", "ERROR", "SKIP")), \
        [matrix.key(r) for r in records["rows"] if r["verdict"] != "PASS" and not r["note"]]
    # a pass rests on calls checked again: none vacuous, none the recorder could not check
    assert all(r["cases"] > 0 and r["unchecked"] == 0 for r in ran if r["verdict"] == "PASS")
    json.dumps(records, allow_nan=False)  # standard JSON: no Infinity

"""The engines' leg is optional: without a reachable package index, or with PE_SUITE_ENGINES=0, it says it is
skipped and why, and succeeds, so the README's test command stands on Debian's packages alone."""
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(**env):
    return subprocess.run(["bash", str(ROOT / "scripts" / "engines.sh")], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=120)


def test_an_unreachable_index_skips_the_leg_and_says_why():
    r = run(PIP_INDEX_URL="http://127.0.0.1:9/simple", PE_SUITE_ENGINES="1")
    assert r.returncode == 0, r.stderr
    assert "engines leg: skipped: the package index http://127.0.0.1:9/simple cannot be reached" in r.stdout
    assert "the engines come from PyPI" in r.stdout


def test_pe_suite_engines_0_skips_the_leg():
    r = run(PE_SUITE_ENGINES="0")
    assert r.returncode == 0 and r.stdout.strip() == "engines leg: skipped (PE_SUITE_ENGINES=0)"

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


# The pytest example is shown on the landing page and in the Python manual; test_example.py runs it.
@pytest.mark.parametrize("page", ["README.md", "docs/python.md"])
def test_page_shows_the_example(page):
    example = (ROOT / "python" / "tests" / "test_example.py").read_text()
    body = example[example.index("def test_my_rope_kernel"):]
    assert body.strip() in (ROOT / page).read_text()


# The verify_rope example: in the README, at most 15 lines; test_verify_example.py runs it.
def test_readme_shows_the_verify_example_in_fifteen_lines():
    example = (ROOT / "python" / "tests" / "test_verify_example.py").read_text()
    body = example[example.index("import torch"):]
    assert body.strip() in (ROOT / "README.md").read_text()
    assert len(body.strip().splitlines()) <= 15


def test_the_first_command_builds_the_module_and_says_where_things_are():
    """README's first command (scripts/run.sh) leaves every documented route working: it builds the Python
    module beside the CLI (the targets scripts/main_targets.sh lists, run here on this build under the same
    shell options) and its last lines name both, with the interpreter the module is built for."""
    build = pathlib.Path(os.environ["PE_SUITE_CLI"]).resolve().parents[1]
    listed = subprocess.run(["bash", str(ROOT / "scripts" / "main_targets.sh"), str(build)], capture_output=True,
                            text=True, check=True).stdout.split()
    assert listed == ["pe-suite", "pe_suite_python"]
    run = (ROOT / "scripts" / "run.sh").read_text()
    assert "bash scripts/main_targets.sh build/release" in run and '--target "${targets[@]}"' in run
    assert 'echo "pe-suite: $PWD/build/release/cli/pe-suite' in run
    assert "PYTHONPATH=$PWD/build/release/python /usr/bin/python3" in run
    readme = (ROOT / "README.md").read_text()
    assert "PYTHONPATH=build/release/python /usr/bin/python3 -m pytest" in readme
    assert "build/release/cli/pe-suite" in readme

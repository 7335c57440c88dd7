"""The pytest plugin (pe_suite.pytest_plugin; `pip install .` registers it): the `pe_suite` fixture runs verify_*
with the command line's seed and example count, a keyword in the call wins, and the header names the seed."""
import pathlib

pytest_plugins = ["pytester"]

INNER = '''
import torch

def rope(x, positions, config):
    d = config["head_dim"]
    inv_freq = 1.0 / config["rope_theta"] ** (torch.arange(0, d, 2).float() / d)
    freqs = positions[:, None].float() * inv_freq[None, :]
    cos, sin = torch.cat((freqs, freqs), -1).cos(), torch.cat((freqs, freqs), -1).sin()
    x_rot = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)
    return x * cos[:, None].to(x.dtype) + x_rot * sin[:, None].to(x.dtype)

def test_options_fill_in(pe_suite):
    summary = pe_suite.verify_rope(rope, rope_types=("default",), failure_file=None)
    assert (summary["examples"], summary["seed"]) == (3, 7)

def test_a_keyword_wins(pe_suite):
    summary = pe_suite.verify_rope(rope, rope_types=("default",), examples=2, failure_file=None)
    assert (summary["examples"], summary["seed"]) == (2, 7)
'''


# A source build names the plugin; an installed wheel registers it too, under the same name, so naming it there is
# harmless (the leg runs this file against the wheel): both load it once
PLUGIN = ["-p", "pe_suite.pytest_plugin"]


def test_the_wheel_registers_the_plugin_under_its_module_name():
    # pytest loads a plugin once per name: the entry point's name is the module's, so a wheel's registration and
    # `-p pe_suite.pytest_plugin` (or a conftest's pytest_plugins) are one plugin, not two
    import tomllib
    pyproject = tomllib.loads((pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {"pe_suite.pytest_plugin": "pe_suite.pytest_plugin"}


def test_the_fixture_takes_the_seed_and_the_example_count_from_the_command_line(pytester):
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest(*PLUGIN, "--pe-suite-seed", "7", "--pe-suite-examples", "3")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["pe-suite *: seed 7 (rerun with --pe-suite-seed 7)"])


def test_without_options_the_seed_is_the_default(pytester, monkeypatch):
    monkeypatch.delenv("PE_SUITE_SEED", raising=False)
    pytester.makepyfile(test_inner="def test_seed(pe_suite):\n    assert pe_suite.seed == 20261130\n")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1)

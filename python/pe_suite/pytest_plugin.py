"""pytest plugin (registered by `pip install .`; from a source build: `pytest -p pe_suite.pytest_plugin`): the
verify_* driver as a fixture whose seed, example count and failure file come from the command line, so an engine's
gate is one call per kernel, a nightly run draws more cases with one flag, and the seed is in the header of every
run that fails.

    def test_rope(pe_suite):
        pe_suite.verify_rope(my_rope, dtypes=("bfloat16",))

--pe-suite-seed N (default $PE_SUITE_SEED, else 20261130), --pe-suite-examples N (default: each verify_*'s own),
--pe-suite-failures PATH (where failures are kept and replayed first; default .pe_suite/failures.json)."""
import functools
import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("pe_suite", "pe-suite: positional encodings against an exact reference")
    group.addoption("--pe-suite-seed", type=int, default=None, help="the draw's seed (default $PE_SUITE_SEED, "
                    "else pe_suite.verify.DEFAULT_SEED)")
    group.addoption("--pe-suite-examples", type=int, default=None, help="cases drawn per verify_* call")
    group.addoption("--pe-suite-failures", default=None, help="the failure file (default .pe_suite/failures.json)")


def _seed(config):
    from pe_suite.verify import DEFAULT_SEED
    given = config.getoption("pe_suite_seed")
    return given if given is not None else int(os.environ.get("PE_SUITE_SEED", DEFAULT_SEED))


def pytest_report_header(config):
    import pe_suite
    return f"pe-suite {pe_suite.__version__}: seed {_seed(config)} (rerun with --pe-suite-seed {_seed(config)})"


class Driver:
    """verify_rope, verify_sinusoidal and verify_alibi with the run's seed, example count and failure file
    filled in; a keyword given to a call wins."""

    def __init__(self, seed, examples, failure_file):
        import pe_suite
        defaults = {"seed": seed}
        if examples is not None:
            defaults["examples"] = examples
        if failure_file is not None:
            defaults["failure_file"] = failure_file
        self.seed, self.defaults = seed, defaults
        for name in ("verify_rope", "verify_sinusoidal", "verify_alibi"):
            setattr(self, name, functools.partial(getattr(pe_suite, name), **defaults))


@pytest.fixture(scope="session")
def pe_suite(pytestconfig):
    """The verify_* driver with this run's --pe-suite-* options (Driver)."""
    return Driver(_seed(pytestconfig), pytestconfig.getoption("pe_suite_examples"),
                  pytestconfig.getoption("pe_suite_failures"))

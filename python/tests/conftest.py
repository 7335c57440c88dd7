import os
import subprocess

import numpy as np
import pytest

import pe_suite


@pytest.fixture
def cli():
    """Runs `pe-suite` (the build's, from $PE_SUITE_CLI) in a folder, returning its stdout."""
    exe = os.environ.get("PE_SUITE_CLI")
    if not exe:
        pytest.fail("PE_SUITE_CLI is not set: ctest sets it to the built pe-suite")

    def run(args, cwd, expect=0):
        r = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
        assert r.returncode == expect, r.stdout + r.stderr
        return r.stdout

    return run


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def pytest_report_header(config):
    return f"pe_suite {pe_suite.__version__} from {pe_suite.__file__}"

"""The `pe-suite` command of a pip-installed pe_suite: the CLI the wheel carries in pe_suite/bin, run in place of
this process (exit code and output are the CLI's own)."""
import os
import pathlib
import sys


def path():
    """The pe-suite executable inside the installed package."""
    return str(pathlib.Path(__file__).resolve().with_name("bin") / "pe-suite")


def main():
    exe = path()
    if not os.access(exe, os.X_OK):
        sys.exit(f"pe-suite: no executable at {exe}: this pe_suite was not installed by `pip install .` "
                 "(a source build's CLI is build/release/cli/pe-suite)")
    os.execv(exe, [exe, *sys.argv[1:]])

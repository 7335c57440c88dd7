"""What the Python-side checks (kv_cache, fp8, scores, t5) share: a report's verdict and its closing lines."""


class Verdict:
    """A check's result: `.passed` (also its truth value) and `.text` (str())."""

    passed = False
    text = ""

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<pe_suite.{type(self).__name__} {'PASS' if self.passed else 'FAIL'}>"


def closing(lines, failed, diagnosis=None, undetermined=""):
    """The text: `lines`, then where the check failed each fit ("the data fits: ...") or "undetermined: ..." (not
    with diagnosis None: the caller said them), then the verdict line."""
    if failed and diagnosis is not None:
        lines = lines + ([f"the data fits: {d}" for d in diagnosis] or [f"undetermined: {undetermined}"])
    return "\n".join(lines + [f"verdict: {'FAIL' if failed else 'PASS'}"]) + "\n"

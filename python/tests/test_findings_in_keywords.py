"""A fitted hypothesis comes back in the caller's words: Python keywords, not the command line's flags.

The engine's finding is a typed spec; each front end restates it. Here a Llama-3 kernel whose
original_max_position is 2048 is checked as the published 8192 (HF's llama3 rule, modeling_rope_utils.py
_compute_llama3_parameters); the report must restate the fit as keywords that, passed back to check_rope,
make the same data pass, and must carry no flag.
"""
import numpy as np

import pe_suite

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}


def test_the_fit_is_restated_as_keywords_that_pass(rng):
    x = rng.standard_normal((16, 1, 128))
    positions = np.arange(32_000, 32_016)
    kernel = dict(LLAMA3, original_max_position_embeddings=2048)
    y = pe_suite.reference_rope(x, positions, base=500000.0, scaling=kernel)
    given = dict(LLAMA3, original_max_position_embeddings=8192)
    report = pe_suite.check_rope(x, y, positions, base=500000.0, scaling=given)
    assert not report.passed, report.text
    assert "--" not in report.text, report.text
    said = [line.split(": ", 1)[1] for line in report.text.splitlines()
            if line.startswith("  as keywords, to check the hypothesis")]
    assert len(said) == 1, report.text
    keywords = eval(f"dict({said[0]})")  # the text is the keywords as a Python call takes them
    assert keywords["scaling"]["rope_type"] == "llama3", said[0]
    assert keywords["scaling"]["original_max_position_embeddings"] == 2048, said[0]
    assert pe_suite.check_rope(x, y, positions, **keywords).passed, said[0]
    explanation = [e for e in report.explanations if "keywords" in e]
    assert explanation and explanation[0]["keywords"] == said[0]
    # The typed hypothesis, by canonical name, beside the words.
    assert explanation[0]["hypothesis"]["original_max_position"] == 2048
    assert explanation[0]["hypothesis"]["scaling"] == "llama3"

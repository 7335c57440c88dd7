"""Where a user goes wrong first: a misspelt keyword, a flag that does not fit the data, which version runs."""
import numpy as np
import pytest

import pe_suite
from pe_suite._keywords import parameter_names

CHECKED = ["check_rope", "check_sinusoidal", "check_alibi", "assert_rope_close", "assert_sinusoidal_close",
           "assert_alibi_close", "reference_rope", "reference_sinusoidal", "reference_alibi", "rope_cos_sin"]


@pytest.mark.parametrize("name", CHECKED)
def test_a_misspelt_keyword_is_named_with_the_one_it_resembles(name):
    function = getattr(pe_suite, name)
    # Every one of these takes `dtype`; the misspelling comes before any argument is read.
    with pytest.raises(TypeError) as e:
        function(None, None, dtyp="float32")
    message = str(e.value)
    assert message == f"{name}(): unexpected keyword 'dtyp' (did you mean 'dtype'?)"


def test_the_issue_s_example_reads_as_one_line():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(TypeError, match=r"^check_rope\(\): unexpected keyword 'bse' \(did you mean 'base'\?\)$"):
        pe_suite.check_rope(x, x, np.arange(4), bse=10000.0)


def test_a_keyword_like_none_lists_the_keywords():
    with pytest.raises(TypeError, match=r"unexpected keyword 'zzzzz' \(keywords: table, positions, base, "):
        pe_suite.check_sinusoidal(None, None, zzzzz=1)


def test_the_signature_parser_reads_nested_types_and_markers():
    doc = "f(a: List[int], b: Dict[str, Tuple[int, int]] = {}, /, *, c: object = None) -> None\n\nText."
    assert parameter_names(doc) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="not a pybind11 signature"):
        parameter_names("no signature here")


def test_correct_keywords_still_reach_the_native_function(rng):
    x = rng.standard_normal((6, 2, 16)).astype(np.float32)
    positions = np.arange(6)
    y = pe_suite.reference_rope(x, positions, base=10000.0, dtype="float32")
    assert pe_suite.check_rope(x, y, positions, base=10000.0).passed


@pytest.mark.parametrize("call", ["check_rope", "reference_rope"])
def test_heads_first_on_two_dimensional_data_is_refused(call, rng):
    x = rng.standard_normal((6, 16)).astype(np.float32)
    args = (x, x, np.arange(6)) if call == "check_rope" else (x, np.arange(6))
    with pytest.raises(ValueError, match=r"heads_first.* given, but x has shape \[6, 16\] \(\[tokens, head_dim\]\): "
                                         r"no heads axis to put first"):
        getattr(pe_suite, call)(*args, heads_first=True)


def test_the_cli_and_the_module_report_one_version(cli, tmp_path):
    assert cli(["--version"], tmp_path).strip() == f"pe-suite {pe_suite.__version__}"
    assert pe_suite.__version__.count(".") == 2

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_shows_the_example():
    example = (ROOT / "python" / "tests" / "test_example.py").read_text()
    body = example[example.index("def test_my_rope_kernel"):]
    assert body.strip() in (ROOT / "README.md").read_text()

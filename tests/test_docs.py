"""The project's own account of its algorithms (docs/algorithms.md): every section code that a
comment or docstring cites resolves to a heading there."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
GUIDE = ROOT / "docs" / "algorithms.md"

#: a code: F1, R3, B12, L1, L1a, L2.0, L3.4, E2
_CODE = re.compile(r"\b([FRBE]\d+|L\d+(?:\.\d+)?[a-c]?)\b")


def _headings() -> set[str]:
    heads = re.findall(r"^#{2,3} (\S+)", GUIDE.read_text(), flags=re.M)
    return {h.rstrip(".") for h in heads}


def _citations() -> list[tuple[str, str]]:
    """(file, the text after each 'docs/algorithms.md' up to the end of its clause)."""
    out = []
    for path in sorted((ROOT / "src" / "oslr").rglob("*.py")):
        text = " ".join(path.read_text().split())
        for m in re.finditer(r"docs/algorithms\.md([^);\"]*)", text):
            out.append((str(path.relative_to(ROOT)), m.group(1)))
    return out


def test_algorithms_guide__every_code_the_source_cites_has_its_heading():
    heads = _headings()
    gaps = len(re.findall(r"^\d+\. ", GUIDE.read_text().split("## 7.")[1], flags=re.M))
    cited, missing = 0, []
    for where, clause in _citations():
        codes = _CODE.findall(clause)
        codes += re.findall(r"sections? (\d+)", clause)
        codes += re.findall(r"sections? \d+ and (\d+|E\d+)", clause)
        for gap in re.findall(r"gap (\d+)", clause):
            cited += 1
            if not 1 <= int(gap) <= gaps:
                missing.append((where, f"gap {gap}"))
        for code in codes:
            cited += 1
            if code not in heads:
                missing.append((where, code))
    assert missing == [] and cited > 60, (cited, missing)


def test_algorithms_guide__no_source_or_page_cites_a_file_outside_the_repository():
    paths = [*(ROOT / "src" / "oslr").rglob("*.py"), *(ROOT / "docs").glob("*.md"),
             *(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "benchmarks").glob("RESULTS*.md"),
             ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    assert len(paths) > 50
    for path in paths:
        text = path.read_text()
        assert "ALGORITHMS.md" not in text and "STYLE.md" not in text, path


def test_docs__name_no_issue_of_the_tracker():
    import re
    from pathlib import Path

    docs = Path(__file__).parents[1] / "docs"
    said = [f"{page.name}:{i}" for page in sorted(docs.glob("*.md"))
            for i, line in enumerate(page.read_text().splitlines(), 1)
            if re.search(r"\bissues? \d+", line, flags=re.I)]
    assert said == []

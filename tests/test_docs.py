"""The user documentation stands alone and states the budget the code spends."""

import re
from pathlib import Path

import pytest

from mipdp.selection import planned_epsilon

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_do_not_point_outside_the_package(page):
    """A user has no ../shared/ and no SPEC.md: the docs must not send them there."""
    text = page.read_text(encoding="utf-8")
    assert "SPEC" not in text and "../shared" not in text and "shared/seeds" not in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_doc_references_resolve(page):
    text = page.read_text(encoding="utf-8")
    for ref in set(re.findall(r"`?(docs/[A-Za-z_]+\.md)", text)):
        assert (ROOT / ref).exists(), f"{page.name} refers to missing {ref}"


def test_math_page_exists_and_is_linked():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/math.md" in readme
    math_page = (ROOT / "docs" / "math.md").read_text(encoding="utf-8")
    for needle in ("Replace-one", "Δ = (b_y + b_x r √s)² / (2n)", "Δ = (1 + b_x r √s) / n",
                   "log(N − R) − ε L(S_(R)) / (2Δ)", "m_k = C(s, k) · C(p − s, k)"):
        assert needle in math_page, needle


def test_budget_in_the_docs_is_the_budget_the_code_spends():
    """README and docs/privacy.md state f·ε + n_draws·(1 − f)·ε (+ ε_test = ε_select/10)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    privacy = (ROOT / "docs" / "privacy.md").read_text(encoding="utf-8")
    assert "total cost `k·ε`" not in readme
    assert "`f·ε + k·(1 − f)·ε`" in readme
    assert "`f·ε + n_draws·(1 − f)·ε`" in privacy and "`ε_test = (1 − f)·ε/10`" in privacy
    eps, k, f = 1.0, 3, 0.2
    assert planned_epsilon(eps, n_draws=k, prescreen=("dp_sis", 5, f)) == pytest.approx(
        f * eps + k * (1 - f) * eps)
    assert planned_epsilon(eps, n_draws=k, prescreen=("dp_sis", 5, f), method="mistakes",
                           delta=1e-6) == pytest.approx(f * eps + k * (1 - f) * eps
                                                        + (1 - f) * eps / 10)


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("page", ["README.md", "docs/guide.md", "docs/index.md"])
def test_python_snippets_run_on_their_own(page):
    """Issue 20 (9): every ```python block of the page runs, in order, in a fresh namespace
    (a later block may use an earlier block's names, as a reader running the page would)."""
    import warnings

    from mipdp import ClippingWarning
    blocks = _python_blocks(ROOT / page)
    assert blocks, page
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)    # the README's design clips
        for i, code in enumerate(blocks):
            exec(compile(code, f"{page}[python block {i}]", "exec"), namespace)


def test_guide_section_1_snippet_clips_nothing_and_section_4_stops_at_the_budget(capsys):
    blocks = _python_blocks(ROOT / "docs" / "guide.md")
    ns: dict = {}
    first = None
    for code in blocks:
        exec(code, ns)
        first = ns.get("res") if first is None else first    # section 1's release
    assert first.info["clipped_fraction_not_private"]["y"] == 0.0
    assert len(ns["acc"]) == 3 and ns["acc"].total().epsilon == pytest.approx(3.0)
    assert "s = 4: accountant" in capsys.readouterr().out


# --- the documentation site (Sphinx; built by .ci/run, never by the default test run) --------

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: public functions that release something: every call in an example fixes its randomness
RELEASES = {"private_bss", "private_coefficients", "dp_sis", "dp_kendall", "two_stage", "mcmc",
            "PrivateBestSubsetSelector", "make_bss_regression", "make_bss_classification"}


def _toctree_entries(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    entries = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, re.S):
        entries += [line.strip() for line in block.splitlines()
                    if line.strip() and not line.startswith(":")]
    return entries


def test_every_docs_page_is_in_the_toctree():
    entries = _toctree_entries(ROOT / "docs" / "index.md")
    pages = {p.stem for p in (ROOT / "docs").glob("*.md") if p.stem != "index"}
    pages |= {p.stem for p in (ROOT / "docs").glob("*.rst")} - {"sg_execution_times"}  # built
    assert pages <= set(entries), f"not in docs/index.md's toctree: {pages - set(entries)}"
    for entry in entries:
        assert (entry == "auto_examples/index" or (ROOT / "docs" / f"{entry}.md").exists()
                or (ROOT / "docs" / f"{entry}.rst").exists()), entry


def test_api_reference_lists_the_public_api():
    import mipdp
    api = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   ([A-Za-z_][A-Za-z_0-9]*)$", api, re.M))
    public = {name for name in mipdp.__all__ if name != "comparators"}
    assert public <= listed, f"missing from docs/api.rst: {public - listed}"
    from mipdp import comparators
    assert set(comparators.__all__) - {"PRESCREENERS"} <= listed


def test_the_gallery_has_eight_examples_that_sphinx_gallery_executes():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert '"filename_pattern": r"/plot_"' in conf and "examples" in conf
    assert (ROOT / "examples" / "README.rst").exists()     # sphinx-gallery needs the header
    assert len(EXAMPLES) >= 8
    assert all(p.name.startswith("plot_") for p in EXAMPLES), "not executed by the build"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_has_a_gallery_header_and_fixes_its_randomness(path):
    import ast
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree, clean=False)
    assert doc, f"{path.name}: sphinx-gallery needs a docstring header"
    lines = [line for line in doc.strip("\n").splitlines()]
    assert len(lines) >= 3 and set(lines[1]) == {"="} and len(lines[1]) >= len(lines[0]), \
        f"{path.name}: the docstring must start with a title underlined by '='"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in RELEASES:
                assert any(k.arg == "random_state" for k in node.keywords), \
                    f"{path.name}:{node.lineno}: {name}(...) without random_state="
    imported = {n.module.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.module}
    assert "mipdp" in imported
    private = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
               and any(part.startswith("_") for part in n.module.split("."))]
    assert not private, f"{path.name} imports private modules {private}"


def test_the_build_output_is_not_committed():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"docs/_build/", "docs/generated/", "docs/auto_examples/"} <= set(ignored)

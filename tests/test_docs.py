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
    """The guide and docs/privacy.md state f·ε + n_draws·(1 − f)·ε (+ ε_test = ε_select/10)."""
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    privacy = (ROOT / "docs" / "privacy.md").read_text(encoding="utf-8")
    assert "`f·ε + k·(1 − f)·ε`" in guide
    assert "`f·ε + n_draws·(1 − f)·ε`" in privacy and "`ε_test = (1 − f)·ε/10`" in privacy
    eps, k, f = 1.0, 3, 0.2
    assert planned_epsilon(eps, n_draws=k, prescreen=("dp_sis", 5, f)) == pytest.approx(
        f * eps + k * (1 - f) * eps)
    assert planned_epsilon(eps, n_draws=k, prescreen=("dp_sis", 5, f), method="mistakes",
                           delta=1e-6) == pytest.approx(f * eps + k * (1 - f) * eps
                                                        + (1 - f) * eps / 10)


def test_readme_is_short_and_no_page_cites_file_numbers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 80
    for page in PAGES:
        assert not re.search(r"seeds? 00\d", page.read_text(encoding="utf-8"), re.I), page.name


def test_guide_is_at_most_600_lines_and_agrees_with_the_command_line():
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert len(guide.splitlines()) <= 600
    assert "is required" not in guide          # mipdp select's --bounds is optional (ranks)
    assert 'error_score="raise"' in guide


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


# --- every command of README.md and docs/ runs (issue 38, 3) ------------------------------
#
# A fenced ```python block is executed, in page order, in one namespace per page (a later
# block may use an earlier block's names, as a reader running the page would), in a fresh
# working directory.  A fenced ```bash block is split into commands: `mipdp ...` (and
# `python -m mipdp ...`) run through the CLI's `main` in the same directory and must return
# 0; `pip install` must name extras that pyproject.toml defines; `python -m pytest` is the
# test run itself.  A block may opt out of running only with the marker
#     <!-- docs-test: skip (reason) -->
# on the line before it; it is then checked without running: python is compiled, `mipdp`
# arguments are parsed by the CLI's parser, `python -m MODULE --flag ...` must name a module
# that exists and whose source defines every flag, asv's `--bench NAME` must name a
# benchmark.  Inline `code` spans that are commands get the same checks without running.

import ast  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import tomllib  # noqa: E402

SKIP_MARKER = re.compile(r"^<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
SHELL = {"bash", "sh", "shell", "console"}
#: python blocks that stand for "your data": the names they assume, made small here
PREAMBLE = {
    "privacy.md": (
        "from mipdp.comparators import dp_sis\n"
        "from mipdp.datasets import make_bss_regression\n"
        "X, y, _ = make_bss_regression(n=400, p=100, s=3, random_state=0)\n"
        "folds = [list(range(0, 400, 5))]\n"),
    "screening.md": (
        "from mipdp.datasets import make_screening_regression\n"
        "X, y, _ = make_screening_regression(n=300, d=40, n_pos=3, n_neg=3, random_state=0)\n"),
}
#: optional extras a documented block may need: without them the block is passed over
OPTIONAL_MODULES = {"opendp", "gurobipy", "pyomo", "abess", "statsmodels"}
#: documented blocks that fail as written, by (page, first line) -> why: each must still
#: fail (a fix makes the test say so).  None today.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


@dataclass
class Block:
    page: str
    line: int
    lang: str
    code: str
    skip: str | None


def _blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang = lines[i][3:].strip()
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            prev = next((x for x in reversed(lines[:i]) if x.strip()), "")
            marker = SKIP_MARKER.match(prev.strip())
            blocks.append(Block(page.name, i + 1, lang, "\n".join(lines[i + 1:j]) + "\n",
                                marker.group("reason") if marker else None))
            i = j
        i += 1
    return blocks


def _commands(code: str) -> list[list[str]]:
    """The simple commands of a shell block: continuations joined, comments dropped,
    `&&` chains split."""
    joined = re.sub(r"\\\n\s*", " ", code)
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            commands.append(words[:cut])
            words = words[cut + 1:]
    return [c for c in commands if c]


def _extras() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(meta["project"]["optional-dependencies"])


def _check_pip(words: list[str], where: str) -> None:
    assert words[:2] == ["pip", "install"], where
    for arg in words[2:]:
        for extras in re.findall(r"\[([^\]]+)\]", arg):
            for extra in extras.split(","):
                assert extra.strip() in _extras(), f"{where}: no extra [{extra}]"


def _check_module(words: list[str], where: str) -> None:
    """`python -m MODULE ARGS`: the module exists and its source defines every --flag."""
    module = words[2]
    if str(ROOT) not in sys.path:               # top-level folders (experiments/) of a clone
        sys.path.append(str(ROOT))
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, f"{where}: no module {module}"
    origin = Path(spec.origin)
    source = origin.read_text(encoding="utf-8")
    if origin.name == "__init__.py" and (origin.parent / "__main__.py").exists():
        source += (origin.parent / "__main__.py").read_text(encoding="utf-8")
    for flag in (w.split("=")[0] for w in words[3:] if w.startswith("--")):
        assert f'"{flag}"' in source or f"'{flag}'" in source, \
            f"{where}: {module} has no option {flag}"


def _parse_mipdp(args: list[str], where: str, name_only: bool = False) -> None:
    """The CLI's parser accepts `args` (with `name_only`, a mention such as `mipdp select`:
    the subcommand exists)."""
    from mipdp.cli import build_parser
    if name_only and not any(a.startswith("-") for a in args):
        args = [*args, "--help"]
    with contextlib.redirect_stdout(sys.stderr):
        try:
            build_parser().parse_args(args)
        except SystemExit as exc:               # argparse's error (or --help, code 0)
            assert exc.code in (0, None), f"{where}: mipdp {' '.join(args)} does not parse"


def _check_asv(words: list[str], where: str) -> None:
    assert (ROOT / "benchmarks" / "asv.conf.json").exists(), where
    if "--bench" in words:
        name = words[words.index("--bench") + 1]
        if re.fullmatch(r"\w+", name):
            sources = "".join(p.read_text(encoding="utf-8")
                              for p in (ROOT / "benchmarks").rglob("*.py"))
            assert f"class {name}" in sources or f"def {name}" in sources, \
                f"{where}: no asv benchmark {name}"


def _check_command(words: list[str], where: str, inline: bool = False) -> None:
    """The checks made without running a command."""
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):    # VAR=value prefix
        words = words[1:]
    if words and words[0] == "nice":                           # a priority prefix
        words = words[1:]
    head = words[0]
    if head == "python" and len(words) > 1 and words[1].endswith(".py"):
        script = ROOT / words[1]                               # a script of the clone
        assert script.exists(), f"{where}: no script {words[1]}"
        source = script.read_text(encoding="utf-8")
        for flag in (w.split("=")[0] for w in words[2:] if w.startswith("--")):
            assert f'"{flag}"' in source or f"'{flag}'" in source, \
                f"{where}: {words[1]} has no option {flag}"
    elif head == "mipdp":
        _parse_mipdp(words[1:], where, inline)
    elif head == "python" and words[1:3] == ["-m", "mipdp"]:
        _parse_mipdp(words[3:], where, inline)
    elif head == "python" and words[1:2] == ["-m"]:
        if words[2] in {"pytest", "sphinx", "webbrowser", "cProfile"}:
            assert importlib.util.find_spec(words[2]) or words[2] == "sphinx", where
        else:
            _check_module(words, where)
    elif head == "pip":
        _check_pip(words, where)
    elif head == "asv":
        _check_asv(words, where)
    elif head in {"cd", "export"}:
        pass
    else:
        raise AssertionError(f"{where}: no rule to run or check {' '.join(words)!r}")


def _run_command(words: list[str], where: str) -> None:
    from mipdp.cli import main
    if words[0] == "python" and words[1:3] == ["-m", "mipdp"]:
        words = ["mipdp", *words[3:]]
    if words[0] == "mipdp":
        try:
            code = main(words[1:])
        except SystemExit as exc:
            code = exc.code
        assert code in (0, None), f"{where}: `{' '.join(words)}` exited with {code}"
    elif words[0] == "pip" or words[:3] == ["python", "-m", "pytest"]:
        _check_command(words, where)        # installing, or this very test run
    else:
        raise AssertionError(f"{where}: `{' '.join(words)}` has no runner here: "
                             "run it through `mipdp ...`, or mark the block "
                             "<!-- docs-test: skip (reason) --> ")


def _run_page(page: Path, capsys) -> None:
    namespace: dict = {"__name__": "__docs__"}
    if page.name in PREAMBLE:
        exec(PREAMBLE[page.name], namespace)
    for block in _blocks(page):
        where = f"{page.name}:{block.line}"
        if block.lang == "python":
            code = compile(block.code, where, "exec")
            known = KNOWN_FAILURES.get((page.name, block.code.splitlines()[0]))
            if known:
                with pytest.raises(Exception):      # noqa: B017 -- see KNOWN_FAILURES
                    exec(code, namespace)
            elif block.skip is None:
                try:
                    exec(code, namespace)
                except ModuleNotFoundError as exc:
                    # a block about an optional extra (opendp, gurobipy, ...) runs where the
                    # extra is installed (CI's `.[dev]`); the light `.[test]` install lacks it
                    if exc.name not in OPTIONAL_MODULES:
                        raise
        elif block.lang in SHELL:
            for words in _commands(block.code):
                (_check_command if block.skip else _run_command)(words, where)
        capsys.readouterr()                     # keep the output of one block at a time


COMMAND_PAGES = [p for p in PAGES if any(b.lang in SHELL | {"python"} for b in _blocks(p))]


@pytest.mark.parametrize("page", COMMAND_PAGES, ids=lambda p: p.name)
def test_every_documented_command_runs(page, tmp_path, monkeypatch, capsys):
    """Every python and shell block of the page runs (or, marked, is checked); the README's
    first example must also run without any warning."""
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        if page.name == "README.md":
            warnings.simplefilter("error")
        else:
            from mipdp import ClippingWarning
            warnings.simplefilter("ignore", ClippingWarning)
        _run_page(page, capsys)


def test_blocks_with_commands_are_tagged():
    """A command in an untagged fence would escape the runner: tag it ```bash."""
    for page in PAGES:
        for block in _blocks(page):
            if block.lang == "":
                for line in block.code.splitlines():
                    assert not re.match(r"\s*(mipdp|python -m|pip install) ", line), \
                        f"{page.name}:{block.line}: tag this block ```bash"


def test_skipped_blocks_give_a_reason_and_are_long_running_only():
    skipped = [b for p in PAGES for b in _blocks(p) if b.skip]
    assert all(len(b.skip) >= 8 for b in skipped)
    readme = _blocks(ROOT / "README.md")
    assert readme and not any(b.skip for b in readme), "the README's commands all run"


INLINE = re.compile(r"`((?:mipdp|python -m|pip install) [^`]+)`")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_inline_commands_parse(page):
    """Commands quoted inline (`mipdp select --help`, `python -m MODULE --flag`) name a
    subcommand, module, option or extra that exists."""
    text = page.read_text(encoding="utf-8")
    for span in INLINE.findall(text):
        span = span.replace("<", "").replace(">", "")
        try:
            words = shlex.split(span)
        except ValueError:
            continue
        if re.search(r"[A-Z]{3,}|\.\.\.|…", span):
            continue                            # a pattern (NAME, FILE.toml, ...), not a command
        if words[:2] == ["python", "-m"] and len(words) < 3:
            continue
        _check_command(words, f"{page.name}: `{span}`", inline=True)


def test_the_runner_fails_on_a_failing_command(tmp_path, monkeypatch, capsys):
    """A documented command that fails, or a documented option that does not exist,
    fails the build."""
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.md"
    bad.write_text("```bash\nmipdp select missing.csv --s 3 --eps 1\n```\n", encoding="utf-8")
    with pytest.raises((AssertionError, Exception)):
        _run_page(bad, capsys)
    bad.write_text("<!-- docs-test: skip (long) -->\n```bash\nmipdp select x.csv --no-such\n"
                   "```\n", encoding="utf-8")
    with pytest.raises(AssertionError):
        _run_page(bad, capsys)
    bad.write_text("```python\nraise RuntimeError('documented code fails')\n```\n",
                   encoding="utf-8")
    with pytest.raises(RuntimeError):
        _run_page(bad, capsys)
    assert ast.parse("x = 1")                   # (ast is used by the gallery test above)

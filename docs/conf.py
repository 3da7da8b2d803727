"""Sphinx configuration of mipdp's documentation site.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root
(warnings are errors); open ``docs/_build/html/index.html``.  The gallery under
``examples/`` is executed at every build.
"""

import os
from pathlib import Path

# the examples run in this process: one BLAS thread keeps a shared build machine responsive
# (set before numpy is first imported, by mipdp below)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import mipdp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

project = "mipdp"
author = "the mipdp developers"
copyright = "mipdp developers"
release = mipdp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "sg_execution_times.rst"]

# --- MyST: the pages under docs/ are plain Markdown written for GitHub -------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3          # "#1-the-support-objective"-style anchors, as on GitHub

# --- API reference --------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"        # numpydoc's Parameters sections state the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# docstring checks that hold today, kept as a guard (-W makes them errors): unknown or
# misordered sections, documented parameters the signature does not have, a missing summary
numpydoc_validation_checks = {"GL06", "GL07", "PR02", "PR06", "PR10", "SS01"}
numpydoc_validation_exclude = {r"\.(get_params|set_params|fit_transform|get_feature_names_out"
                               r"|get_support|inverse_transform|transform)$"}   # scikit-learn's

# --- gallery --------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",       # execute every plot_*.py file
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "show_memory": False,
    "write_computation_times": True,
    "reset_modules": ("matplotlib",),
    # "Examples using ..." at the foot of each API page (see docs/_templates/autosummary/)
    "doc_module": ("mipdp",),
    "backreferences_dir": "generated/backreferences",
    "inspect_global_variables": False,
}

# --- HTML -----------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"mipdp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []
html_show_sourcelink = False

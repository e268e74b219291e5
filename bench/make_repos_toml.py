"""Write the [repos] table of `bugsleuth eval` for a data set, from the local git mirrors.

Usage: python bench/make_repos_toml.py [--set lite|multilang] [--mirrors /work/.mirror] [--out FILE]
`--set lite` (default) writes bench/repos.toml for swebench_lite.jsonl; `--set multilang` writes
bench/repos-multilang.toml for multilang_dev.jsonl. Repositories whose official history is too large to mirror
are served by public forks with the same commit ids.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MIRRORS = {
    "psf/requests": "psf+requests",
    "pallets/flask": "pallets+flask",
    "django/django": "apprent1c3+django",
    "sympy/sympy": "sympy+sympy",
    "astropy/astropy": "astropy+astropy",
    "scikit-learn/scikit-learn": "DSYemen+scikit-learn",
    "matplotlib/matplotlib": "williamlus+matplotlib",
    "pytest-dev/pytest": "pytest-dev+pytest",
    "pydata/xarray": "pydata+xarray",
    "sphinx-doc/sphinx": "sphinx-doc+sphinx",
    "pylint-dev/pylint": "pylint-dev+pylint",
    "mwaskom/seaborn": "mwaskom+seaborn",
}
"""Repository in the data → mirror directory name (`owner+name` of the repository holding its commits)."""

MULTILANG_MIRRORS = {
    "jqlang/jq": "jqlang+jq",
    "fmtlib/fmt": "fmtlib+fmt",
    "catchorg/Catch2": "catchorg+Catch2",
    "yhirose/cpp-httplib": "yhirose+cpp-httplib",
    "zeromicro/go-zero": "zeromicro+go-zero",
    "fasterxml/jackson-core": "FasterXML+jackson-core",
    "google/gson": "google+gson",
    "anuraghazra/github-readme-stats": "anuraghazra+github-readme-stats",
    "axios/axios": "axios+axios",
    "expressjs/express": "expressjs+express",
    "Kong/insomnia": "Kong+insomnia",
    "BurntSushi/ripgrep": "BurntSushi+ripgrep",
    "sharkdp/bat": "sharkdp+bat",
    "tokio-rs/tokio": "tokio-rs+tokio",
}
"""The same for multilang_dev.jsonl (the data spells `fasterxml/jackson-core` in lower case)."""

SETS = {"lite": (MIRRORS, "repos.toml"), "multilang": (MULTILANG_MIRRORS, "repos-multilang.toml")}
"""Data set → (its mirror table, the default output file name in bench/)."""


def render(mirrors: Path, table: dict[str, str] = MIRRORS) -> tuple[str, list[str]]:
    """The TOML text of `table` and the repositories whose mirror is absent."""
    lines = ["# Written by bench/make_repos_toml.py: repository in the data = local git directory", "[repos]"]
    absent = []
    for repo, folder in table.items():
        git_dir = mirrors / folder / "repo"
        if not git_dir.exists():
            absent.append(repo)
            lines.append(f'# "{repo}" = "{git_dir}"  # absent')
            continue
        lines.append(f'"{repo}" = "{git_dir}"')
    return "\n".join(lines) + "\n", absent


def main() -> int:
    """Write the table; exit 1 when a mirror is absent (the table is still written without it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="lite", help="which data set's repositories")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=None, help="default: bench/repos.toml or bench/repos-multilang.toml")
    args = parser.parse_args()
    table, name = SETS[args.set]
    out = args.out or Path(__file__).resolve().parent / name
    text, absent = render(args.mirrors, table)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(table) - len(absent)} repositories)")
    for repo in absent:
        print(f"absent: {repo}", file=sys.stderr)
    return 1 if absent else 0


if __name__ == "__main__":
    sys.exit(main())

"""Write bench/repos.toml: the [repos] table of `bugsleuth eval` for the dev set, from the local git mirrors.

Usage: python bench/make_repos_toml.py [--mirrors /work/.mirror] [--out bench/repos.toml]
Repositories whose official history is too large to mirror are served by public forks with the same commit ids.
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


def render(mirrors: Path) -> tuple[str, list[str]]:
    """The TOML text and the repositories whose mirror is absent."""
    lines = ["# Written by bench/make_repos_toml.py: repository in the data = local git directory", "[repos]"]
    absent = []
    for repo, folder in MIRRORS.items():
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
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "repos.toml")
    args = parser.parse_args()
    text, absent = render(args.mirrors)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(MIRRORS) - len(absent)} repositories)")
    for repo in absent:
        print(f"absent: {repo}", file=sys.stderr)
    return 1 if absent else 0


if __name__ == "__main__":
    sys.exit(main())

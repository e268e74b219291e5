"""A small real repository and a real symbol index for the diagnosis tests (report_md, verify, structure, export)."""

from __future__ import annotations

import textwrap
from pathlib import Path

CONFIG_PY = textwrap.dedent(
    '''\
    """Configuration loading."""

    import json


    class Config:
        """Settings read from a JSON file."""

        def __init__(self, path):
            self.path = path

        def load(self):
            with open(self.path) as f:
                data = json.load(f)
            return data["section"]


    def default_config():
        return Config("settings.json")
    '''
)
"""src/app/config.py: `Config.load` (lines 12-15) indexes a key an empty file lacks."""

MAIN_PY = textwrap.dedent(
    '''\
    from app.config import Config


    def main(argv):
        cfg = Config(argv[1])
        section = cfg.load()
        print(section["name"])
        return 0
    '''
)
"""src/app/main.py: `main` (lines 4-8)."""

UTIL_PY = textwrap.dedent(
    '''\
    def parse_header(line):
        key, _, value = line.partition(":")
        return key.strip().lower(), value.strip()
    '''
)
"""lib/util.py: `parse_header` (lines 1-3); also copied nowhere else."""


def make_repo(root: Path) -> Path:
    """Write the fixture repository under `root` and return it."""
    files = {
        "src/app/__init__.py": "",
        "src/app/config.py": CONFIG_PY,
        "src/app/main.py": MAIN_PY,
        "lib/util.py": UTIL_PY,
        "README.md": "# demo\n",
        ".env": "SECRET=1\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "data.bin").write_bytes(b"\x00\x01\x02binary")
    return root


def make_index(root: Path):
    """The real repo map symbol index of the fixture repository."""
    try:
        from repomap import build_repo_map  # type: ignore[attr-defined]

        return build_repo_map(root, cache_dir=root.parent / "map-cache").index
    except ImportError:
        from repomap.index import SymbolIndex
        from repomap.tags import extract_tags

        paths = [p.relative_to(root).as_posix() for p in root.rglob("*.py")]
        return SymbolIndex(lambda p: extract_tags((root / p).read_bytes(), "python").definitions(p), paths)

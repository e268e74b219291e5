"""The sandbox: every path spelling that leads out of the repository, to a secret or to a special file is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.errors import ToolError, UnrecoverableError, UserError
from funnel.tools.sandbox import Sandbox, ToolLimits, cap_bytes
from tests.funnel.tools_corpus import DENY, SECRET_VALUES, corpus  # noqa: F401


@pytest.fixture
def sb(corpus: Path) -> Sandbox:  # noqa: F811
    return Sandbox(corpus, deny=DENY)


@pytest.mark.parametrize(
    "spelling",
    ["../outside/secret.txt", "..", "../", "src/../../outside/secret.txt", "..\\outside\\secret.txt",
     "src\\..\\..\\outside", "./../outside", "src/pkg/../../../outside/secret.txt", "foo/../../"],
)
def test_resolve_refuses_traversal_in_every_spelling(sb: Sandbox, spelling: str):
    with pytest.raises(ToolError, match="outside the repository"):
        sb.resolve(spelling)


@pytest.mark.parametrize("spelling", ["/etc/passwd", "\\etc\\passwd", "~/.ssh/id_rsa", "C:\\Windows\\win.ini", "//etc"])
def test_resolve_refuses_absolute_paths(sb: Sandbox, spelling: str):
    with pytest.raises(ToolError, match="absolute path"):
        sb.resolve(spelling)


def test_absolute_path_inside_root_gets_a_relative_hint(sb: Sandbox):
    with pytest.raises(ToolError, match="Did you mean 'src/app.py'"):
        sb.resolve(str(sb.root / "src" / "app.py"))


def test_percent_encoded_traversal_is_a_literal_name(sb: Sandbox):
    with pytest.raises(ToolError, match="Not found"):
        sb.resolve("%2e%2e/outside/secret.txt")


def test_dot_dot_inside_the_root_is_allowed(sb: Sandbox):
    assert sb.resolve("src/pkg/../app.py") == sb.root / "src" / "app.py"


@pytest.mark.parametrize("link", ["escape_file", "escape_dir", "escape_dir/secret.txt"])
def test_resolve_refuses_symlinks_leading_outside(sb: Sandbox, link: str):
    with pytest.raises(ToolError, match="symlink that points outside"):
        sb.resolve(link)


def test_symlink_inside_the_root_resolves_to_its_target(sb: Sandbox):
    assert sb.relative(sb.resolve("app_link.py")) == "src/app.py"


def test_symlink_to_a_secret_is_withheld(sb: Sandbox):
    with pytest.raises(ToolError, match="withheld"):
        sb.resolve("innocent_name.txt")


def test_resolve_refuses_nul_bytes(sb: Sandbox):
    with pytest.raises(ToolError, match="NUL"):
        sb.resolve("src/app.py\x00.txt")


def test_resolve_refuses_fifos(sb: Sandbox):
    with pytest.raises(ToolError, match="FIFO"):
        sb.resolve("pipe")


@pytest.mark.parametrize("rel", sorted(SECRET_VALUES))
def test_resolve_withholds_secret_files(sb: Sandbox, rel: str):
    with pytest.raises(ToolError, match="withheld"):
        sb.resolve(rel)


@pytest.mark.parametrize("rel", [".git", ".git/HEAD", "src/../.git/config", ".GIT/config"])
def test_resolve_withholds_git_internals(sb: Sandbox, rel: str):
    with pytest.raises(ToolError, match="withheld"):
        sb.resolve(rel)


def test_deny_list_withholds_configured_paths(corpus: Path):  # noqa: F811
    assert Sandbox(corpus, deny=DENY).is_secret("config/private.yml")
    assert not Sandbox(corpus).is_secret("config/private.yml")
    assert Sandbox(corpus, deny=("*.yml",)).is_secret("a/b/c.yml")


def test_ordinary_files_are_not_secret(sb: Sandbox):
    for rel in ["src/app.py", ".gitignore", "docs/environment.md", "keyboard.py", "README.md"]:
        assert not sb.is_secret(rel), rel


def test_missing_file_suggests_the_nearest_paths(sb: Sandbox):
    with pytest.raises(ToolError) as err:
        sb.resolve("src/pkg/parsr.py")
    assert "src/pkg/parser.py" in str(err.value)


def test_missing_file_in_another_directory_suggests_the_same_name(sb: Sandbox):
    with pytest.raises(ToolError) as err:
        sb.resolve("lib/parser.py")
    assert "src/pkg/parser.py" in str(err.value)


def test_suggestions_never_name_secret_files(sb: Sandbox):
    with pytest.raises(ToolError) as err:
        sb.resolve("config/server.pen")
    assert "server.pem" not in str(err.value)


def test_kind_mismatch_says_which_tool_to_use(sb: Sandbox):
    with pytest.raises(ToolError, match="list_dir"):
        sb.resolve("src", kind="file")
    with pytest.raises(ToolError, match="read_range"):
        sb.resolve("src/app.py", kind="dir")


def test_missing_root_is_unrecoverable(tmp_path: Path):
    with pytest.raises(UnrecoverableError):
        Sandbox(tmp_path / "gone")


def test_bad_limits_are_a_user_error(tmp_path: Path):
    with pytest.raises(UserError):
        ToolLimits(read_max_lines=0)
    with pytest.raises(UserError):
        Sandbox(tmp_path, deny="*.yml")


def test_cap_bytes_marks_the_cut_and_stays_within_the_cap():
    text = "é" * 10_000
    out = cap_bytes(text, 1000)
    assert len(out.encode()) <= 1000
    assert "output truncated" in out
    assert cap_bytes("short", 1000) == "short"


_PARTS = ["..", ".", "src", "pkg", "app.py", "escape_dir", "escape_file", ".env", ".git", "innocent_name.txt",
          "%2e%2e", "~", "", "config", "pipe", "secret.txt", "C:"]  # fmt: skip


def test_no_path_spelling_resolves_outside_the_root_or_to_a_secret(tmp_path_factory: pytest.TempPathFactory):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.funnel.tools_corpus import build_corpus

    root = build_corpus(tmp_path_factory.mktemp("prop"))
    sb = Sandbox(root, deny=DENY)
    outside = root.parent / "outside"

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=6), st.sampled_from(["/", "\\", "//"]), st.booleans())
    def check(parts: list[str], sep: str, absolute: bool):
        spelled = ("/" if absolute else "") + sep.join(parts)
        try:
            real = sb.resolve(spelled)
        except ToolError:
            return
        assert real == sb.root or sb.root in real.parents
        assert outside not in real.parents and real != outside
        assert not sb.is_secret(sb.relative(real))

    check()


def test_a_name_with_a_colon_after_its_first_letter_is_a_file_not_a_drive(tmp_path: Path):
    (tmp_path / "x:12.py").write_text("x = 1\n")
    sb = Sandbox(tmp_path)
    assert sb.relative(sb.resolve("x:12.py", kind="file")) == "x:12.py"
    with pytest.raises(ToolError, match="absolute path"):
        sb.resolve("C:/Windows/win.ini")


def test_a_name_starting_with_a_tilde_is_a_file_and_only_a_home_directory_is_refused(tmp_path: Path):
    (tmp_path / "~notes.py").write_text("x = 1\n")
    sb = Sandbox(tmp_path)
    assert sb.relative(sb.resolve("~notes.py", kind="file")) == "~notes.py"
    for home in ("~", "~/notes.py"):
        with pytest.raises(ToolError, match="absolute path"):
            sb.resolve(home)


def test_a_name_typed_composed_finds_the_file_committed_decomposed_and_keeps_its_spelling(tmp_path: Path):
    decomposed = "cafe\u0301.py"
    (tmp_path / decomposed).write_text("x = 1\n")
    sb = Sandbox(tmp_path)
    assert sb.relative(sb.resolve("caf\u00e9.py", kind="file")) == decomposed
    assert sb.on_disk("caf\u00e9.py") == decomposed and sb.on_disk("missing\u00e9.py") == "missing\u00e9.py"

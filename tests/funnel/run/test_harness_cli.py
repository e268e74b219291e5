"""`bugsleuth investigate`: reads a report, prints the diagnosis in the asked format, exit code by termination."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from typer.testing import CliRunner

from app.cli import cli
from app.commands._terminal import terminal_safe
from tests.cli_output import said
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT

REPORT_TEXT = "apply_discount returns the wrong price\napply_discount(1000, 10) returns 0 instead of 900.\n"


def _invoke(tmp_path, *args: str, report: str = REPORT_TEXT, stdin: str | None = None):
    path = tmp_path / "report.txt"
    path.write_text(report)
    source = "-" if stdin is not None else str(path)
    return CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", source, *args], input=stdin)


def test_investigate_prints_markdown_and_progress(tmp_path):
    out = _invoke(tmp_path, "--explorer", "scripted", "--trace", str(tmp_path / "t.jsonl"))
    assert out.exit_code == 0, out.output
    assert "shop/pricing.py" in out.stdout and "Scripted stand-in" in out.stdout
    assert "stop: done" in out.stderr and "search(" in out.stderr
    assert (tmp_path / "t.jsonl").is_file() and (tmp_path / "t.messages.json").is_file()


def test_investigate_json_is_a_diagnosis(tmp_path):
    out = _invoke(tmp_path, "--explorer", "scripted", "--json", "--quiet")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["termination"]["reason"] == "done" and data["stats"]["explorer"] == "scripted"
    assert out.stderr == ""


def test_investigate_sarif(tmp_path):
    out = _invoke(tmp_path, "--explorer", "scripted", "--format", "sarif", "-q")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["version"] == "2.1.0"


def test_investigate_reads_the_report_from_stdin_and_json_reports(tmp_path):
    payload = json.dumps({"title": "apply_discount wrong", "body": "apply_discount(1000, 10) gives 0"})
    out = _invoke(tmp_path, "--explorer", "scripted", "--json", "-q", stdin=payload)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["affected_files"][0]["path"] == "shop/pricing.py"


def test_a_stopped_run_exits_3_with_its_partial_result(tmp_path):
    out = _invoke(tmp_path, "--explorer", "scripted", "--json", "-q", report="zzqqxx happens\nnothing else")
    assert out.exit_code == 3, out.output
    assert json.loads(out.stdout)["termination"]["reason"] == "needs_info"


def test_a_command_explorer_from_the_cli(tmp_path):
    (tmp_path / "r.md").write_text(GOOD_REPORT)
    out = _invoke(tmp_path, "--explorer", f"command:cat > /dev/null; cat {tmp_path / 'r.md'}", "--json", "-q")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["affected_files"][0]["line_start"] == 8


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path):
    empty = _invoke(tmp_path, "--explorer", "scripted", report="   ")
    assert empty.exit_code == 2 and "empty" in empty.output and "Traceback" not in empty.output
    missing = CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", str(tmp_path / "nope.txt")])
    assert missing.exit_code == 2 and "no report file" in missing.output
    bad_json = _invoke(tmp_path, "--explorer", "scripted", report='{"title": 3}')
    assert bad_json.exit_code == 2 and "not a valid report JSON" in bad_json.output
    bad_explorer = _invoke(tmp_path, "--explorer", "nosuch:model")
    assert bad_explorer.exit_code == 2 and "cannot use model" in bad_explorer.output
    not_dir = CliRunner().invoke(cli, ["investigate", str(tmp_path / "nodir"), "--report", "-"], input="x")
    assert not_dir.exit_code == 2 and "directory" in not_dir.output
    for not_git in (tmp_path / "nodir", tmp_path):  # missing, and a plain directory
        bad_git = _invoke(tmp_path, "--git-dir", str(not_git))
        assert bad_git.exit_code == 2 and "not a git repository" in bad_git.output and "Traceback" not in bad_git.output


def test_a_report_file_is_read_in_the_encoding_its_byte_order_mark_names_or_utf8_or_windows_1252(tmp_path):
    payload = json.dumps({"title": "apply_discount wrong", "body": "apply_discount(1000, 10) gives 0"})
    files = {"bom.json": b"\xef\xbb\xbf" + payload.encode(), "ps.txt": REPORT_TEXT.encode("utf-16"),
             "utf32.txt": REPORT_TEXT.encode("utf-32"),
             "legacy.txt": REPORT_TEXT.replace("wrong", "wr\u00f6ng").encode("cp1252")}  # fmt: skip
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        out = CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", str(tmp_path / name),
                                       "--explorer", "offline", "--json", "-q"])  # fmt: skip
        assert out.exit_code == 0, (name, out.output)
        summary = json.loads(out.stdout)["summary"]  # quotes the title
        assert "apply_discount" in summary and "\ufeff" not in summary and "\ufffd" not in summary, summary
    out = CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", "-", "--explorer", "scripted",
                                   "--json", "-q"], input=b"\xef\xbb\xbf" + payload.encode())  # fmt: skip
    assert out.exit_code == 0 and json.loads(out.stdout)["affected_files"][0]["path"] == "shop/pricing.py"



def test_a_binary_report_or_memory_file_is_refused_with_its_reason(tmp_path):
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    binary = CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", str(tmp_path / "core.bin")])
    assert binary.exit_code == 2 and "is not text: it holds a NUL byte at offset 7" in said(binary)
    piped = CliRunner().invoke(cli, ["investigate", str(FIXTURE_REPO), "--report", "-"], input=b"crash\x00\x00")
    assert piped.exit_code == 2 and "stdin is not text" in said(piped)
    no_memory = _invoke(tmp_path, "--explorer", "scripted", "--memory", str(tmp_path / "notes.md"))
    assert no_memory.exit_code == 2 and "no memory file at" in said(no_memory)
    bad_memory = _invoke(tmp_path, "--explorer", "scripted", "--memory", str(tmp_path / "core.bin"))
    assert bad_memory.exit_code == 2 and "is not text" in said(bad_memory) and "Traceback" not in bad_memory.output


def test_a_commit_the_repository_does_not_hold_is_refused(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE_REPO, repo)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run([*git, *args], check=True)
    (tmp_path / "r.txt").write_text(REPORT_TEXT)
    run = ["investigate", str(repo), "--report", str(tmp_path / "r.txt"), "--explorer", "scripted", "--json", "-q"]
    unknown = CliRunner().invoke(cli, [*run, "--commit", "deadbeef"])
    assert unknown.exit_code == 2 and f"commit deadbeef is not in the git directory {repo / '.git'}" in said(unknown)
    known = CliRunner().invoke(cli, [*run, "--commit", "HEAD"])
    assert known.exit_code == 0 and json.loads(known.stdout)["stats"]["commit"] == "HEAD"


def test_what_a_report_or_a_model_writes_cannot_drive_the_terminal(tmp_path):
    hostile = GOOD_REPORT.replace("removes the whole price.", "removes the whole price.\x1b]52;c;cm0gLXJm\x07 \x07\x08\x08"
                                  "\r\u202eecirp\x1b[2J")  # fmt: skip
    (tmp_path / "r.md").write_text(hostile)
    title = "apply_discount returns the wrong price \x07\x08\x08\u202e\n"
    explorer = f"command:cat > /dev/null; cat {tmp_path / 'r.md'}"
    out = _invoke(tmp_path, "--explorer", explorer, report=title + "body")
    assert out.exit_code == 0, out.output
    for stream in (out.stdout, out.stderr):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", stream), stream
    # the command's escape sequences are taken out of its report; what is left is printed as escapes
    assert "whole price. \\x07\\x08\\x08" in out.stdout and "\\u202eecirp" in out.stdout and "52;c" not in out.stdout
    as_json = _invoke(tmp_path, "--explorer", explorer, "--json", "-q", report=title + "body")
    assert "\x07\x08\x08" in json.loads(as_json.stdout)["summary"]  # JSON carries the text; its encoder escapes it


def test_terminal_safe_writes_control_characters_as_escapes_and_keeps_lines_and_tabs():
    assert terminal_safe("a\x1b[31mb\r\nc\rd\u202ee\tf\n") == "a\\x1b[31mb\nc\\x0dd\\u202ee\tf\n"
    assert terminal_safe("plain – text ✓") == "plain – text ✓"


def test_a_trace_path_that_cannot_be_written_or_a_structurer_that_cannot_run_is_refused(tmp_path):
    directory = _invoke(tmp_path, "--explorer", "scripted", "--trace", str(tmp_path))
    assert directory.exit_code == 2 and f"cannot write the trace to {tmp_path}: Is a directory" in directory.output
    assert "Traceback" not in directory.output
    unknown = _invoke(tmp_path, "--explorer", "scripted", "--structurer", "nosuch:model")
    assert unknown.exit_code == 2 and "cannot use model 'nosuch:model'" in unknown.output  # before: the parser, unsaid
    parser = _invoke(tmp_path, "--explorer", "scripted", "--structurer", "parser", "--json", "-q")
    assert parser.exit_code == 0 and json.loads(parser.stdout)["stats"]["structurer"] == "parser"

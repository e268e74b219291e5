"""Source text in UTF-16 reads as the UTF-8 it holds; other bytes pass unchanged."""

from __future__ import annotations

import codecs

import pytest

from repomap import build_repo_map
from repomap.encoding import line_count, looks_binary, to_utf8, utf16

TEXT = "def total(xs):\r\n    return sum(xs) / len(xs)  # é\r\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_its_byte_order_mark_is_text_and_reads_as_utf8(codec):
    data = "\ufeff".encode(codec) + TEXT.encode(codec)
    assert utf16(data) == codec and not looks_binary(data)
    assert to_utf8(data) == TEXT.encode("utf-8")
    assert to_utf8(data[:-1]) == TEXT[:-1].encode("utf-8")  # a head cut inside a character loses that character


@pytest.mark.parametrize("data", [TEXT.encode(), codecs.BOM_UTF8 + TEXT.encode(), TEXT.encode("latin-1"), b"\xff\xfe"[:1]])
def test_other_bytes_pass_unchanged(data):
    assert to_utf8(data) == data and utf16(data) is None


@pytest.mark.parametrize("data", ["\ufeffx".encode("utf-32-le"), b"\x7fELF\x02\x01\x00\x00", TEXT.encode("utf-16-le")])
def test_utf32_a_binary_and_utf16_without_its_mark_look_binary(data):
    assert looks_binary(data)


def test_a_utf16_file_gets_its_definitions_in_the_map(tmp_path):
    (tmp_path / "stats.py").write_bytes(codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"))
    repo_map = build_repo_map(tmp_path / ".", cache_dir=tmp_path.parent / "cache")
    assert [f.path for f in repo_map.files] == ["stats.py"]
    assert "1-2 def total(xs)" in repo_map.text


def test_a_final_newline_ends_the_last_line_and_starts_none():
    assert line_count("a\nb\n") == 2
    assert line_count("a\nb") == 2
    assert line_count("a\n\n") == 2

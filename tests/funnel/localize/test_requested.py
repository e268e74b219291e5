"""What a feature request asks to add, read from its title against the tree's real definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.localize.rank import build_corpus
from funnel.localize.requested import find_addition, requested_names
from repomap import build_repo_map

WATCH_RS = """\
pub struct Receiver<T> {
    version: u64,
    value: T,
}

impl<T> Receiver<T> {
    pub fn borrow(&self) -> &T {
        &self.value
    }

    pub fn mark_changed(&mut self) {
        self.version -= 1;
    }

    pub fn has_changed(&self) -> bool {
        self.version > 0
    }
}

pub struct ReadyGuard {
    ready: bool,
}

impl ReadyGuard {
    pub fn try_io(&mut self) -> bool {
        self.ready
    }
}
"""

NET_RS = """\
pub struct UnixStream {
    fd: i32,
}

impl UnixStream {
    pub fn connect(path: &str) -> UnixStream {
        UnixStream { fd: open(path) }
    }
}

pub struct TcpListener {
    fd: i32,
}

impl TcpListener {
    pub fn bind(addr: &str) -> TcpListener {
        TcpListener { fd: listen(addr) }
    }
}

pub struct UnixDatagram {
    fd: i32,
}

impl UnixDatagram {
    pub fn bind(path: &str) -> UnixDatagram {
        UnixDatagram { fd: open(path) }
    }
}
"""

ORDERS_PY = """\
def names(orders):
    return [o.name for o in orders]


def total(orders):
    return sum(o.amount for o in orders)
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("tree")
    (root / "src").mkdir()
    (root / "src" / "watch.rs").write_text(WATCH_RS)
    (root / "src" / "lib.rs").write_text("pub mod watch;\n")  # a definition named `watch`, as a module
    (root / "src" / "net.rs").write_text(NET_RS)
    (root / "tests").mkdir()
    (root / "tests" / "unix.rs").write_text("struct UnixStreamMock;\n\nimpl UnixStreamMock {\n    fn bind() {}\n}\n")
    (root / "shop").mkdir()
    (root / "shop" / "orders.py").write_text(ORDERS_PY)
    found, _ = build_corpus(root, build_repo_map(root, cache_dir=root.parent / f"{root.name}-cache"))
    return found


@pytest.mark.parametrize(
    ("title", "wanted"),
    [
        ("Add `Receiver::try_io`", [("try_io", "Receiver")]),  # ReadyGuard has one; Receiver does not
        ("Add `mark_unchanged` or `mark_seen` for `sync::watch::Receiver`", [("mark_unchanged", None), ("mark_seen", None)]),
        ("Add an option to `src.watch.Receiver()`", []),  # a module path: `watch` is defined, and so is its `Receiver`
        ("Add Receiver::mark_changed()", []),  # it exists
        ("Support `total` of an empty list", []),
        ("Allow `if let` in select", []),  # a phrase in backticks, not a name
        ("Add a `clear` method", [("clear", None)]),  # a plain word, but written as code
        ("Expose a `bind` method on `UnixStream`", [("bind", "UnixStream")]),  # two others have one; it does not
        ("Expose a `connect` method on `UnixStream`", []),  # it has one
        ("Offer a way to set `ReadyGuard` via `Receiver`", []),  # a type the title names, not a missing member
    ],
)
def test_a_title_requests_the_names_it_writes_as_code_that_the_tree_lacks(corpus, title, wanted):
    assert requested_names(title, corpus) == wanted


def test_an_addition_goes_after_the_owners_member_it_most_resembles(corpus):
    addition = find_addition("Add `mark_unchanged` or `mark_seen` for `sync::watch::Receiver`", corpus, "src/watch.rs")
    assert addition is not None and addition.owner == "Receiver" and addition.name == "mark_unchanged"
    assert addition.after is not None and addition.after.qualname == "Receiver.mark_changed"


def test_an_addition_resembling_no_member_has_an_owner_but_no_place(corpus):
    addition = find_addition("Add `Receiver::wait`", corpus, "src/watch.rs")
    assert addition is not None and addition.owner == "Receiver" and addition.after is None


def test_a_name_no_definition_has_goes_beside_the_files_top_level_definition_it_resembles(corpus):
    addition = find_addition("Add `names_sorted` to the orders module", corpus, "shop/orders.py")
    assert addition is not None and addition.owner is None
    assert addition.after is not None and addition.after.qualname == "names"


def test_a_member_missing_only_from_an_owner_elsewhere_is_not_placed_at_the_top_level(corpus):
    assert find_addition("Add `Receiver::try_io`", corpus, "shop/orders.py") is None


def test_a_member_another_owner_has_names_that_definition_as_the_precedent(corpus):
    addition = find_addition("Add `Receiver::try_io`", corpus, "src/watch.rs")
    assert addition is not None and addition.precedent is not None
    assert (addition.precedent.path, addition.precedent.span.qualname) == ("src/watch.rs", "ReadyGuard.try_io")


def test_the_precedent_is_the_owner_whose_name_is_most_like_the_requested_owner_outside_tests(corpus):
    addition = find_addition("Expose a `bind` method on `UnixStream`", corpus, "src/net.rs")
    assert addition is not None and addition.owner == "UnixStream" and addition.name == "bind"
    assert addition.precedent is not None and addition.precedent.span.qualname == "UnixDatagram.bind"


def test_a_name_the_tree_defines_nowhere_has_no_precedent(corpus):
    addition = find_addition("Add `mark_unchanged` for `sync::watch::Receiver`", corpus, "src/watch.rs")
    assert addition is not None and addition.precedent is None

"""Rust items written inside macro invocations (`cfg_rt! { ... }`) are definitions at their own lines."""

from __future__ import annotations

from repomap._macros import unwrap_item_macros
from repomap.languages import grammar
from repomap.tags import extract_tags

RUST = b"""use crate::runtime;

cfg_rt! {
    /// Spawns a task.
    pub fn spawn(x: u32) -> u32 { runtime::enter(x) }

    cfg_time! {
        pub(crate) fn sleep_until(d: u64) {}
    }
}

impl Registration {
    cfg_io_readiness! {
        pub(crate) async fn readiness(&self) -> u8 { self.poll() }
    }

    pub fn clear(&self) {}
}

pin_project! {
    pub struct Sleep {
        #[pin]
        entry: TimerEntry,
    }
}

fn body() {
    let v = vec![1, 2, 3];
    tokio::select! {
        _ = a => {}
    }
}
"""


def _defs(source: bytes) -> list[tuple[str, str, int, int]]:
    return [(d.qualname, d.kind.value, d.start_line, d.end_line) for d in extract_tags(source, "rust").definitions("lib.rs")]


def test_items_inside_a_macro_invocation_are_definitions_at_their_own_lines():
    defs = _defs(RUST)
    assert ("spawn", "function", 5, 5) in defs
    assert ("sleep_until", "function", 8, 8) in defs
    assert ("Sleep", "struct", 21, 24) in defs


def test_functions_in_a_macro_inside_an_impl_are_methods_of_its_type():
    defs = _defs(RUST)
    assert ("Registration.readiness", "method", 14, 14) in defs
    assert ("Registration.clear", "method", 17, 17) in defs


def test_calls_inside_an_unwrapped_macro_are_references():
    refs = {r.name for r in extract_tags(RUST, "rust").references("lib.rs")}
    assert {"enter", "poll"} <= refs


def test_a_macro_whose_body_is_not_items_stays_opaque():
    source = b"bitflags! {\n    pub struct Ready: u8 {\n        const READABLE = 0b01;\n    }\n}\n\nfn after() {}\n"
    assert _defs(source) == [("after", "function", 7, 7)]


def test_macros_in_expressions_leave_the_function_as_it_was():
    defs = _defs(RUST)
    assert ("body", "function", 27, 32) in defs
    assert not [d for d in defs if d[2] > 27]


def test_an_invocation_cut_short_keeps_every_byte_it_has():
    source = b"cfg_rt! {\n    fn a() {}\n    struct S;;"
    parser = grammar("rust").parser
    unwrapped, _ = unwrap_item_macros(source, parser.parse(source), parser)
    assert unwrapped == source

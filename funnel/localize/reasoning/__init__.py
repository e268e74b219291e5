"""The offline reasoning layer: the line a report points at inside the suspect definitions, the mechanism and
the proposed edit, from an error-semantics table (`kinds`) and behaviour rules (`engine`)."""

from funnel.localize.reasoning.engine import Finding, Span, named_items, reason, selected_kinds

__all__ = ("Finding", "Span", "named_items", "reason", "selected_kinds")

"""The reports the conformance scenarios' models write when they leave the template: renamed sections, setext
headings, a fence around the whole, JSON, French, code-host addresses, a quote the file does not hold."""

from __future__ import annotations

import json
import re

from tests.funnel.harness_support import GOOD_REPORT

QUOTE = "return price_cents - price_cents * percent // 10"
"""The buggy line of the fixture repository, as it is."""


def structured(path: str = "shop/pricing.py", evidence: str = QUOTE) -> dict:
    """The draft a structurer model sends for the fixture's bug, citing `path` and quoting `evidence`."""
    return {"summary": "A 10% discount removes the whole price.",
            "root_cause": {"explanation": "Divides by 10 instead of 100.", "evidence": []},
            "affected_files": [{"path": path, "line_start": 8, "line_end": 8, "symbol": "apply_discount",
                                "role": "cause", "evidence": evidence}],
            "confidence": 0.8}  # fmt: skip


FRENCH_REPORT = """\
## Résumé
Une remise de 10 % supprime tout le prix.

## Explication
La remise est divisée par 10 au lieu de 100, dans `shop/pricing.py:8`.

    return price_cents - price_cents * percent // 10

## Confiance
0.8
"""

SETEXT_REPORT = re.sub(r"^## (.+)$", lambda m: f"{m.group(1)}\n{'=' * len(m.group(1))}", GOOD_REPORT, flags=re.M)
FENCED_REPORT = "Here is my report:\n\n````markdown\n" + GOOD_REPORT + "````\n"
JSON_REPORT = json.dumps(structured(), indent=2)
RENAMED_REPORT = (
    GOOD_REPORT.replace("## Summary", "## Problem")
    .replace("## Root cause", "## Analysis")
    .replace("## Affected files", "## Location")
    .replace("## Proposed changes", "## Fix")
)

PERMALINK_REPORT = (
    GOOD_REPORT.replace("`shop/pricing.py:8` divides", "`shop/pricing.py`:8 divides")
    .replace("1. `shop/pricing.py:8-8` — `apply_discount` (cause)",
             "1. [apply_discount](https://github.com/acme/shop/blob/4f2c1e9/shop/pricing.py#L8) (cause)")
    .replace("- `shop/pricing.py` — `apply_discount`:", "- https://github.com/acme/shop/blob/main/shop/pricing.py (`apply_discount`):")
)
"""A report citing files by their address on a code host and lines past the path's closing backtick."""

BAD_QUOTE = GOOD_REPORT.replace(QUOTE, "return price * rate / 10")
"""A report quoting code the cited file does not contain (the verifier refuses it)."""

THOUGHT = """\
The user says a discount removes the whole price. Maybe the cart adds it twice? A draft:
## Summary
The cart is wrong.
## Affected files
1. `shop/cart.py:3-3` — `Cart` (cause)
No: the cart only calls apply_discount, and pricing divides by 10."""
"""A reasoning model's thought: a drafted report it then rejects (the draft's file and summary are wrong)."""

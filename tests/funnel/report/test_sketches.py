"""A proposed change's diff sketch checked against the file it edits, read as loosely as models write sketches."""

from __future__ import annotations

import pytest

from funnel.report.sketches import sketch_misfit
from funnel.report.structure import structure
from funnel.report.verify import verify_report
from tests.funnel.diagnosis_support import CONFIG_PY, make_repo
from tests.funnel.report.test_structure import REPORT

LINES = CONFIG_PY.splitlines()

FITS = [
    '--- a/src/app/config.py\n+++ b/src/app/config.py\n@@ -12,3 +12,3 @@\n'
    '         with open(self.path) as f:\n             data = json.load(f)\n-        return data["section"]\n'
    '+        return data.get("section", {})\n',
    # no header, context lines without their leading space, an elision
    'def load(self):\n...\n-    return data["section"]\n+    return data.get("section", {})\n',
    '@@ -1 +1,2 @@\n+import logging\n',  # only adds: claims nothing about the file
]


@pytest.mark.parametrize("diff", FITS)
def test_a_sketch_whose_old_lines_the_file_holds_fits(diff):
    assert sketch_misfit(LINES, diff) is None


def test_a_sketch_removing_a_line_the_file_lacks_names_that_line():
    diff = '@@ -20,2 +20,2 @@\n def load(self):\n-    return yaml.safe_load(f)["section"]\n+    return {}\n'
    assert sketch_misfit(LINES, diff) == 'return yaml.safe_load(f)["section"]'


def test_a_hunk_removing_only_blank_lines_is_named_by_its_context():
    assert sketch_misfit(LINES, "@@ -3,2 +3,2 @@\n import yaml\n-\n+import json\n") == "import yaml"


def test_a_change_whose_sketch_does_not_fit_is_kept_without_it_and_the_sketch_recorded(tmp_path):
    root = make_repo(tmp_path / "repo")
    diff = '```diff\n-    return yaml.safe_load(f)["section"]\n+    return {}\n```'
    report = REPORT.replace('return `data.get("section", {})`.', 'return `{}`.\n  ' + diff.replace("\n", "\n  "))
    d = structure(report, root)
    assert [(c.path, c.diff) for c in d.proposed_changes] == [("src/app/config.py", None)]
    sketch = [r for r in d.rejected if r.kind == "diff_sketch"]
    assert len(sketch) == 1 and "yaml.safe_load" in sketch[0].claim["diff"]
    assert sketch[0].reason.startswith('its line `return yaml.safe_load(f)["section"]` does not occur in')
    verdict = verify_report(report.replace("3. `src/app/ghost.py:3` — `haunt` (related)\n", ""), root)
    assert verdict.ok and any(n.startswith("a diff sketch for `src/app/config.py`, which") for n in verdict.notes)

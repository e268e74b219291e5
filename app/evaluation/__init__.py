"""`bugsleuth eval`: localization accuracy of the investigation on real issues, read against plain BM25.

Modules: `data` (inputs), `trees` (tree cache), `baseline` (BM25), `metrics`, `runner` (parallel, resumable),
`report` (summary.json / summary.md / summary.svg), `session` (the command's flow).
"""

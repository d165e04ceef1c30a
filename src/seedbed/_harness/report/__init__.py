"""`seedbed report`: a sweep's results file as one self-contained HTML page.

Part of the harness (layer 6; its command is in `seedbed.cli`): it reads
only the results file (contract 4: JSON lines of a header and one record per
seed), never runs anything, and imports nothing from the layers below but
the version. The file is streamed and
folded into counters (`_aggregate`), plotted as inline SVG (`_plots`) and
written as one page with its style and script inline (`_page`, `_assets`).
"""

from __future__ import annotations

from seedbed._harness.report._aggregate import Aggregate, ResultsError, read_results
from seedbed._harness.report._write import write_report

__all__ = ["Aggregate", "ResultsError", "read_results", "write_report"]

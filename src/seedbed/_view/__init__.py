"""`seedbed view`: a run's trace as a space-time diagram in one self-contained HTML file.

`_model` reads a trace file (a stream) into lanes, points, arrows, spans and
operations; `_page` writes them and the page's script into one page;
`_command` is the CLI command.
"""

from seedbed._view._model import Diagram, build
from seedbed._view._write import write_view

__all__ = ["Diagram", "build", "write_view"]

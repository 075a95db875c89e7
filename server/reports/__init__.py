"""PDF reports of finished inspections: requests, rendering (borb, optional), signed links.

Importing this package imports no PDF library: borb is loaded by `borb_renderer` only when a
report is rendered (see docs/reports.md for why).
"""

from __future__ import annotations

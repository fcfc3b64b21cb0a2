"""What leaves the process as text or files: the report, compare, exports and the headless JSON
lines. Each formats figures computed in ``nvfp4_tui.core.figures``."""

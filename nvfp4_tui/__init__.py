"""nvfp4-tui: a terminal monitor and benchmark harness for a box of GPUs serving LLMs."""

__version__ = "0.1.0"

"""Start-up wiring: a profile resolved once, the worker process, the writer, the UI or the headless
printer put together for ``run``, ``demo``, ``follow``, ``replay`` and ``--detach``."""

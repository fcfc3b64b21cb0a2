"""The exit codes of ``nvfp4-tui``: one list, the one the README's "Exit codes" section shows."""

from __future__ import annotations

OK = 0
# Something unexpected (a bug, a worker process that died); also `follow` of an aborted run.
FAILED = 1
# Bad input: the command line, a profile, a suite, a snapshot, or an output directory that
# cannot be written. Nothing was run.
USAGE = 2
# A run ended on its own with every endpoint down (refusing, not serving the model, or given up
# on after an outage): no endpoint ran its plan, so a script must not read success.
ALL_DOWN = 3
# A snapshot read only in part (`report`, `export`, `compare`, `replay`, `follow`): a part, a
# compacted table, a journal or an events row could not be read. The output covers the rest;
# stderr names each file or row skipped, so nothing recorded is silently left out.
DAMAGED = 4
# A run that went on to its end, in which an endpoint's server died: it passed its health check,
# then stopped answering (a crash under a request, such as vLLM's EngineCore, or an outage past
# outage_give_up_s) and ended the run down. Its rows carry the server's last message; the other
# endpoints ran their plans. Every endpoint down is ALL_DOWN instead.
SERVER_DIED = 5
# A headless run (or the UI's worker) stopped before its plan ended: Ctrl-C, SIGTERM, SIGHUP, the
# UI's stop, a snapshot that could no longer be written.
STOPPED = 130

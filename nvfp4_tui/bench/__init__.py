"""Benchmarking: the client that measures one streaming request, the runner of a plan's phases
(closed and open loop, sweeps, outages, the verify backlog), the session that records a run, the
worker process that hosts it, and the run's provenance."""

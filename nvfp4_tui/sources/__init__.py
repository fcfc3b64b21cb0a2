"""Where the UI's events come from: a live run's worker process, a followed snapshot, a replay."""

"""Test support shared by the suites (and by scripts/screenshots.py): deterministic events, a
fixed source and a sample app; the factories every test builds its events and snapshots with;
an event loop on a virtual clock for schedules. Not shipped in the package."""

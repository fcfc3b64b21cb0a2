"""Test support shared by the suites (and by scripts/screenshots.py): deterministic events, a
fixed source and a sample app. Not shipped in the package."""

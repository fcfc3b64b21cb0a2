"""What a user declares: profiles, prompt suites and the checks their prompts carry, read from TOML
with a one-line error for every bad key."""

from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data"
# The demo's profile and the suites ship with the package; a profile's own suites/ folder adds
# to the built-in suites or overrides them by name.
DEMO_PROFILE = _DATA / "profiles" / "demo.toml"
BUILTIN_SUITES = _DATA / "suites"

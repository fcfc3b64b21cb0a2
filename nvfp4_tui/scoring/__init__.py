"""Quality scorers for answers: seed-comparable heuristics and verifying scorers."""

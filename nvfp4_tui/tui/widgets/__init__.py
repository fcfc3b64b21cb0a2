"""Widgets the screens are built from: GPU panes, the run header, meters, charts."""

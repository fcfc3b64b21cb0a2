"""Measurement: one streaming request -> one record (client), plans and phases (runner)."""

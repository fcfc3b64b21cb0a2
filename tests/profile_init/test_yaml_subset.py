"""The YAML subset that compose files are read in: the forms they use, and what is refused."""

from __future__ import annotations

import pytest

from nvfp4_tui.profile_init.yaml_subset import YamlError, parse


def test_the_forms_compose_files_use() -> None:
    text = """\
---
# a comment
services:
  a:
    command:
    - --port
    - "80#81"  # a '#' inside quotes is text
    labels: {x: 'it''s', "y": [1, "2, 3"]}
    entry: |
      one
      two
    empty:
  b: plain text: with a colon
"""
    assert parse(text) == {
        "services": {
            "a": {
                "command": ["--port", "80#81"],
                "labels": {"x": "it's", "y": ["1", "2, 3"]},
                "entry": "one\ntwo",
                "empty": None,
            },
            "b": "plain text: with a colon",
        }
    }


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a:\n  b: *ref\n", 2, "anchors, aliases and tags"),
        ("a:\n\tb: 1\n", 2, "a tab in the indentation"),
        ("a: 1\na: 2\n", 2, "key 'a' appears twice"),
        ("a:\n  - 1\n  b: 2\n", 3, "indented deeper than the keys"),
    ],
)
def test_what_is_refused_names_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(YamlError, match=message) as caught:
        parse(text)
    assert caught.value.line == line

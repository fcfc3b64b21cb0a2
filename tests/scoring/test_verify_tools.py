"""The tool-call scorer: JSON Schema validation, order-insensitive matching, penalties."""

from __future__ import annotations

import json

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.scoring.heuristic import meets
from nvfp4_tui.scoring.tool_check import score_tool_schema

TOOLS = load_suite(BUILTIN_SUITES / "tool_call.toml")
PROMPTS = {p.id: p for p in TOOLS.prompts}


def call(name: str, arguments: dict | str) -> dict:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"call-{name}", "name": name, "arguments": raw}


OSAKA = call("check_inventory", {"sku": "SKU-1042", "warehouse": "osaka"})
NAGOYA = call("check_inventory", {"sku": "SKU-1042", "warehouse": "nagoya"})
EVENT = {
    "title": "Quarterly Review",
    "start": "2025-07-14T15:00",
    "timezone": "Asia/Tokyo",
    "duration_minutes": 45,
    "attendees": ["bob@example.com", "alice@example.com"],
}


@pytest.mark.parametrize(
    ("prompt_id", "calls", "score", "detail"),
    [
        # Parallel calls in either order match.
        ("stock-two-warehouses", [OSAKA, NAGOYA], 1.0, "matched:2/2|calls:2|invalid:0"),
        ("stock-two-warehouses", [NAGOYA, OSAKA], 1.0, "matched:2/2|calls:2|invalid:0"),
        # One of two made: half.
        ("stock-two-warehouses", [OSAKA], 0.5, "matched:1/2|calls:1|invalid:0"),
        # "Osaka" is not in the schema's enum: the call is invalid even though the expected
        # argument (case-insensitive) would match; it costs the penalty.
        (
            "stock-two-warehouses",
            [OSAKA, call("check_inventory", {"sku": "SKU-1042", "warehouse": "Nagoya"})],
            0.25,
            "matched:1/2|calls:2|invalid:1|check_inventory: warehouse 'Nagoya' is not one of "
            "['osaka', 'nagoya', 'sendai', 'fukuoka']",
        ),
        # The same call twice: the second matches nothing.
        ("stock-two-warehouses", [OSAKA, OSAKA], 0.25, "matched:1/2|calls:2|invalid:0"),
        ("schedule-review", [call("create_event", EVENT)], 1.0, "matched:1/1|calls:1|invalid:0"),
        # A string where the schema wants an integer.
        (
            "schedule-review",
            [call("create_event", {**EVENT, "duration_minutes": "45"})],
            0.0,
            "matched:0/1|calls:1|invalid:1|create_event: duration_minutes '45' is not of type "
            "'integer'",
        ),
        # A format check: the attendee is not an email address.
        (
            "schedule-review",
            [call("create_event", {**EVENT, "attendees": ["alice", "bob@example.com"]})],
            0.0,
            "matched:0/1|calls:1|invalid:1|create_event: attendees/0 'alice' is not a 'email'",
        ),
        (
            "convert-currency",
            [call("convert_currency", '{"amount": 250, "from_currency": "usd",')],
            0.0,
            "matched:0/1|calls:1|invalid:1|convert_currency: arguments are not JSON",
        ),
        (
            "convert-currency",
            [call("get_rates", {"base": "USD"})],
            0.0,
            "matched:0/1|calls:1|invalid:1|unknown tool 'get_rates'",
        ),
        (
            "convert-currency",
            [
                call(
                    "convert_currency",
                    {"amount": 250, "from_currency": "usd", "to_currency": "EUR"},
                ),
                call("search_web", {"query": "USD EUR rate"}),
            ],
            0.75,
            "matched:1/1|calls:2|invalid:0",
        ),
    ],
    ids=[
        "parallel",
        "parallel-reversed",
        "one-of-two",
        "enum-violation",
        "repeated-call",
        "event",
        "string-for-integer",
        "not-an-email",
        "broken-json",
        "unknown-tool",
        "surplus-call",
    ],
)
def test_tool_calls_are_validated_then_matched(prompt_id, calls, score, detail):
    got_score, got_detail = score_tool_schema(PROMPTS[prompt_id], "", calls)
    assert got_detail == detail
    assert got_score == pytest.approx(score)


def test_no_call_scores_zero_and_says_whether_text_came_instead():
    prompt = PROMPTS["convert-currency"]
    assert score_tool_schema(prompt, "About 230 euros.", []) == (0.0, "text_only")
    assert score_tool_schema(prompt, "  ", []) == (0.0, "no_call")


def test_constraints_follow_the_suite_format():
    assert meets({"contains": "REVIEW"}, "Quarterly review")
    assert meets({"min": 1, "max": 3}, 3) and not meets({"min": 1}, True)
    assert meets({"one_of": ["EUR", "USD"]}, " usd ")
    assert meets(["a", "b"], ["b", "a"]) and not meets(["a", "b"], ["a"])
    assert not meets(1, "1") and not meets(True, 1)

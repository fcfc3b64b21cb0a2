"""The optional LLM judge: one answer graded against a suite's rubric by an OpenAI-compatible server.

Off unless a profile names a judge (see ``JudgeConfig``). The judge sees the suite's rubric, the
prompt and the answer (never the reasoning), and replies with a JSON object
``{"score": 0-10, "reason": "..."}``; ``parse_verdict`` also accepts the object inside a code
fence or after ``<think>`` text, and a bare ``score: 7/10`` line. The score becomes 0-1 in the
request row's ``score_judge`` column, kept apart from the heuristic and verified scores. A judge
that fails (HTTP error, timeout, a reply without a score) gives no score and a detail that says
why, e.g. ``judge_error:http_503``; it never fails the request it grades. The reason is the
judge's text: it passes ``core.outside_text`` before it is cut and stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets, outside_line, secrets_of

JUDGE_SCALE = 10.0
ANSWER_MAX_CHARS = 24_000  # longer answers are cut (the judge is told) to bound the request
_REASON_CHARS = 160
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_SCORE_LINE = re.compile(
    r"score\W{0,3}\s*[:=]?\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?", re.I
)

JUDGE_SYSTEM = (
    "You grade one answer to one prompt against a rubric. Be strict and consistent: judge only "
    "what the answer says, not what it might have meant. Reply with one JSON object and "
    'nothing else: {"score": <integer 0-10>, "reason": "<one sentence>"}.'
)


class JudgeError(ValueError):
    """A judge reply that carries no usable score."""


@dataclass(frozen=True)
class JudgeConfig:
    """A judge endpoint and the rubric per suite; suites without a rubric are not judged."""

    url: str  # base URL of an OpenAI-compatible server, with or without /v1
    model: str
    rubrics: Mapping[str, str] = field(default_factory=dict)
    api_key: str | None = None  # resolved by the caller from the profile's api_key_env
    timeout_s: float = 60.0
    max_tokens: int = 512

    @property
    def chat_url(self) -> str:
        base = self.url.rstrip("/")
        return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


def judge_messages(rubric: str, prompt_text: str, answer_text: str) -> list[dict[str, str]]:
    cut = len(answer_text) > ANSWER_MAX_CHARS
    answer = answer_text[:ANSWER_MAX_CHARS] + ("\n[... answer cut for length]" if cut else "")
    user = f"## Rubric\n{rubric}\n\n## Prompt\n{prompt_text}\n\n## Answer\n{answer}"
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that starts at a ``{`` in ``text``, in order."""
    decoder = json.JSONDecoder()
    found = []
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def parse_verdict(content: str, secrets: Secrets = NO_SECRETS) -> tuple[float, str]:
    """The judge's score on 0-1 and its reason (scrubbed of ``secrets``); raises JudgeError
    when the reply has none."""
    text = _THINK.sub("", content)
    for body in _objects(text):
        raw = body.get("score")
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            # The judge's own words: scrubbed of keys and escapes, then cut.
            reason = outside_line(str(body.get("reason", "")), _REASON_CHARS, secrets)
            return _scaled(float(raw), JUDGE_SCALE), reason
    m = _SCORE_LINE.search(text)
    if m:
        scale = float(m.group(2)) if m.group(2) else JUDGE_SCALE
        return _scaled(float(m.group(1)), scale), ""
    raise JudgeError("no score in the judge's reply")


def _scaled(raw: float, scale: float) -> float:
    if scale <= 0 or not 0 <= raw <= scale:
        raise JudgeError(f"score {raw:g} is outside 0-{scale:g}")
    return raw / scale


async def judge_answer(
    session: aiohttp.ClientSession,
    config: JudgeConfig,
    suite: str,
    prompt_text: str,
    answer_text: str,
    *,
    secrets: Secrets = NO_SECRETS,
) -> tuple[float | None, str | None]:
    """(score 0-1, detail) for one answer; (None, None) when the suite has no rubric. The
    detail is scrubbed of the judge's key and ``secrets`` (the run's other keys)."""
    rubric = config.rubrics.get(suite)
    if rubric is None:
        return None, None
    body = {
        "model": config.model,
        "messages": judge_messages(rubric, prompt_text, answer_text),
        "max_tokens": config.max_tokens,
        "temperature": 0.0,
        "stream": False,
    }
    # A judge that echoes its key, or another the run sends, must not put it on disk.
    secrets = secrets | secrets_of(config.api_key)
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    timeout = aiohttp.ClientTimeout(total=config.timeout_s)
    try:
        # A redirect is not followed: the prompt, the answer and the key go to the judge's host only.
        async with session.post(
            config.chat_url, json=body, headers=headers, timeout=timeout, allow_redirects=False
        ) as response:
            if not 200 <= response.status < 300:
                return None, f"judge_error:http_{response.status}"
            reply = await response.json(content_type=None)
        content = reply["choices"][0]["message"]["content"] or ""
        score, reason = parse_verdict(content, secrets)
    except TimeoutError:
        return None, "judge_error:timeout"
    except aiohttp.ClientError as e:
        return None, f"judge_error:connect: {type(e).__name__}"
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return None, outside_line(f"judge_error:reply: {e}", _REASON_CHARS, secrets)
    return score, f"judge:{score * JUDGE_SCALE:g}/{JUDGE_SCALE:g}" + (
        f"|{reason}" if reason else ""
    )

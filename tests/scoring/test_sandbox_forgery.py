"""Model code cannot forge its own pass: the verdict is what the tests' process's asserts decide.

Each attack is an answer that would pass if the code under test could write, print, exit or
compare its way to a verdict; each must score 0 (issue 27, item 1). They run under bubblewrap
and the rlimit-only fallback where it runs (see ``conftest.mode``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.checks import HiddenTests
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.scoring import sandbox_bridge
from nvfp4_tui.scoring.sandbox import SandboxRun, run_hidden_tests, wanted_names
from nvfp4_tui.scoring.verify import score_verified
from tests.scoring.sandbox_support import LIMITS, assert_unharmed, contained, run

FORGE_EVERY_FD = (  # the reported attack, which passed every test before the tests had a process
    "import os\n"
    "def forge():\n"
    "    for fd in range(3, 1024):\n"
    "        try:\n"
    '            os.write(fd, b\'{"outcome": "passed", "reason": ""}\')\n'
    "        except OSError:\n"
    "            pass\n"
    "    os._exit(0)\n"
)


def test_a_verdict_written_to_every_descriptor_then_exit_scores_0(mode, sandbox_tmp):
    code = FORGE_EVERY_FD + "def attack():\n    forge()\n"
    result = run(mode, code)
    # The forged verdict reached the tests' process on the wire, before the exit: no reply.
    assert contained(result) == "answer: a line cut off by the end of the wire"
    assert_unharmed(sandbox_tmp)


def test_humaneval_answers_that_forge_score_0_end_to_end(sandbox_tmp):
    """The reported attack: functions that forge their verdict and return None, on HumanEval."""
    suite = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
    scores = []
    for prompt in suite.prompts[:3]:
        assert prompt.check is not None and prompt.check.defines
        entry_point = prompt.check.defines[0]
        answer = f"```python\n{FORGE_EVERY_FD}def {entry_point}(*args):\n    forge()\n```"
        verdict = score_verified(suite, prompt, answer, None)
        assert verdict is not None
        scores.append(verdict)
    assert [score for score, _ in scores] == [0.0, 0.0, 0.0], scores
    assert_unharmed(sandbox_tmp)


def test_a_verdict_printed_on_stdout_scores_0(mode, sandbox_tmp):
    code = (
        "import sys\n"
        "def attack():\n"
        '    print(\'{"outcome": "passed", "reason": ""}\', flush=True)\n'
        '    print(\'{"test": "test_attack", "outcome": "passed"}\', flush=True)\n'
        "    sys.stdout.write('{\"ok\": true}\\n')\n"
        "    return None\n"
    )
    assert contained(run(mode, code)) == "assert failed: assert attack()"
    assert_unharmed(sandbox_tmp)


def test_killing_the_parent_then_exiting_scores_0(mode, sandbox_tmp):
    code = (
        "import os, signal\n"
        "def attack():\n"
        "    for target in (os.getppid(), 0, -1):\n"
        "        try:\n"
        "            os.kill(target, signal.SIGKILL)\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
    )
    result = run(mode, code)
    if result.seccomp:  # without it the harness itself dies: nothing is scored at all
        assert contained(result) == "exited with code 0 before the test finished"
    assert result.passed == 0
    assert_unharmed(sandbox_tmp)


@pytest.mark.parametrize(
    "returned",
    [
        "class Everything:\n    def __eq__(self, other):\n        return True\n",
        "class Everything(int):\n    def __eq__(self, other):\n        return True\n",
        "class Everything(str):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = str.__hash__\n",
    ],
    ids=["object", "int-subclass", "str-subclass"],
)
def test_an_object_equal_to_everything_cannot_cross(mode, sandbox_tmp, returned):
    code = returned + "def attack():\n    return Everything()\n"
    tests = HiddenTests("def test_attack():\n    assert attack() == 42\n", ("test_attack",))
    assert contained(run(mode, code, tests)) == "assert failed: assert attack() == 42"
    assert_unharmed(sandbox_tmp)


def test_garbage_on_the_wire_breaks_it_and_fails(mode, sandbox_tmp):
    """The answer's process writes straight to its end of the wire: a reply ahead of time,
    then a line that is no reply at all."""
    code = (
        "import os\n"
        "def attack():\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        '            os.write(fd, b\'{"ok": true, "forged": 1}\\nnot json\\n\')\n'
        "        except OSError:\n"
        "            pass\n"
        "    return True\n"
    )
    reason = contained(run(mode, code))
    assert reason.startswith("answer: ")
    assert_unharmed(sandbox_tmp)


def test_the_answer_cannot_reach_the_tests_globals_through_a_callback(mode, sandbox_tmp):
    """Handed a function of the tests', the answer asks for its globals, its class and a
    frame, in raw requests on the wire, to reach ``os`` on the tests' side; all refused."""
    code = (
        "import json, os\n"
        "def attack(callback):\n"
        "    seen = []\n"
        "    for name in ('__globals__', '__class__', 'tb_frame', 'f_globals', 'gi_frame'):\n"
        "        try:\n"
        "            seen.append(object.__getattribute__(callback, '_ask')('getattr', n=name))\n"
        "        except Exception as error:\n"
        "            seen.append(type(error).__name__)\n"
        "    return seen\n"
    )
    tests = HiddenTests(
        "def helper():\n    return 1\n\n"
        "def test_attack():\n"
        "    seen = attack(helper)\n"
        "    assert seen == ['AttributeError'] * 5, seen\n"
        "    assert False\n",
        ("test_attack",),
    )
    assert contained(run(mode, code, tests)) == "assert failed: assert False"
    assert_unharmed(sandbox_tmp)


def test_a_context_manager_of_the_answers_hides_no_failure(mode, sandbox_tmp):
    code = (
        "class Quiet:\n"
        "    def __enter__(self):\n        return self\n"
        "    def __exit__(self, *exc):\n        return True\n"
        "def attack():\n    return Quiet()\n"
    )
    tests = HiddenTests(
        "def test_attack():\n    with attack():\n        assert 1 == 2\n", ("test_attack",)
    )
    assert contained(run(mode, code, tests)) == "assert failed: assert 1 == 2"
    assert_unharmed(sandbox_tmp)


def test_system_exit_and_a_swallowed_broken_wire_still_fail(mode, sandbox_tmp):
    code = "import os\ndef leave():\n    raise SystemExit(0)\ndef attack():\n    os._exit(0)\n"
    tests = HiddenTests(
        "def test_leave():\n    leave()\n\n"
        "def test_attack():\n"
        "    try:\n        attack()\n    except BaseException:\n        pass\n",
        ("test_leave", "test_attack"),
    )
    result = run(mode, code, tests)
    assert [o.outcome for o in result.outcomes] == ["failed", "crashed"]
    assert result.outcomes[0].reason.startswith("RemoteError: SystemExit")
    assert_unharmed(sandbox_tmp)


def test_the_answer_cannot_stand_in_for_a_builtin_or_a_stubs_helper(mode, sandbox_tmp):
    stub = "def poly(x):\n    return x * 2\n\ndef root(x):\n    '''Solve.'''\n"
    code = (
        stub + "def poly(x):\n    return 0\ndef abs(x):\n    return 0\ndef root(x):\n    return 7\n"
    )
    tests = HiddenTests("def test_root():\n    assert abs(poly(root(3))) < 1\n", ("test_root",))
    assert wanted_names(tests, stub, ("root",)) == ["root"]
    result = run_with_stub(mode, code, tests, stub)
    assert contained(result) == "assert failed: assert abs(poly(root(3))) < 1"
    assert_unharmed(sandbox_tmp)


def run_with_stub(mode: str, code: str, tests: HiddenTests, stub: str) -> SandboxRun:
    return run_hidden_tests(
        code, tests, stub=stub, defines=("root",), limits=LIMITS, use_bwrap=mode == "bwrap"
    )


def test_classes_callbacks_exceptions_and_coroutines_cross(mode, sandbox_tmp):
    """What the built-in coding suite needs of the wire works: an instance's methods, a fake
    clock of the tests' called back, a built-in exception caught by class, async methods and
    ``async with``, iteration and a subclass of ValueError."""
    code = (
        "import asyncio\n"
        "class Bad(ValueError):\n    pass\n"
        "class Box:\n"
        "    def __init__(self, clock):\n        self.clock, self.items = clock, []\n"
        "    def put(self, x):\n"
        "        if x < 0:\n            raise Bad('negative')\n"
        "        self.items.append((self.clock(), x))\n"
        "    def __iter__(self):\n        return iter(self.items)\n"
        "    async def later(self):\n        await asyncio.sleep(0.01)\n        return len(self.items)\n"
        "    async def __aenter__(self):\n        return 'in'\n"
        "    async def __aexit__(self, *exc):\n        return None\n"
    )
    tests = HiddenTests(
        "import asyncio\n"
        "class Clock:\n    def __call__(self):\n        return 5.0\n"
        "def test_box():\n"
        "    box = Box(Clock())\n"
        "    box.put(1)\n"
        "    box.put(2)\n"
        "    assert list(box) == [(5.0, 1), (5.0, 2)]\n"
        "    try:\n        box.put(-1)\n    except ValueError as error:\n"
        "        assert str(error) == 'negative'\n"
        "    else:\n        raise AssertionError('no ValueError')\n"
        "async def test_async():\n"
        "    box = Box(Clock())\n"
        "    assert await asyncio.wait_for(box.later(), timeout=1.0) == 0\n"
        "    async with box as entered:\n        assert entered == 'in'\n",
        ("test_box", "test_async"),
    )
    result = run(mode, code, tests)
    assert [(o.outcome, o.reason) for o in result.outcomes] == [("passed", "")] * 2
    assert_unharmed(sandbox_tmp)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        -2.5,
        float("inf"),
        "é\x00",
        b"\xff",
        1 + 2j,
        [1, (2, 3)],
        {"a": {1, 2}},
        frozenset({4}),
        (),
        {(1, 2): [None]},
    ],
)
def test_plain_data_crosses_as_itself(wire, value):
    decoded = wire.decode(wire.encode(value))
    assert decoded == value and type(decoded) is type(value)


@pytest.mark.parametrize(
    "data",
    [
        {"l": [1], "t": [2]},
        {"q": 1},
        {"h": "1"},
        {"r": 99},
        {"d": [[[1], 2]]},
        {"m": "nvfp4_tui"},
        [1, 2],
        {"b": "zz"},
        {"c": [1, "2"]},
        {"X": "print"},
    ],
)
def test_anything_else_is_refused(wire, data):
    with pytest.raises(sandbox_bridge.WireError):
        wire.decode(data)


def test_an_exception_becomes_the_first_builtin_class_it_names(wire):
    error = wire.decode({"x": [["Bad", "print", "KeyError", "Exception"], "why"]})
    assert type(error) is KeyError
    assert type(wire.decode({"x": [["Bad", "SystemExit"], "0"]})) is sandbox_bridge.RemoteError


@pytest.fixture
def wire() -> Iterator[sandbox_bridge.Wire]:
    """One end of a wire, for the codec alone: nothing is sent on it."""
    read_fd, write_fd = os.pipe()
    yield sandbox_bridge.Wire(read_fd, write_fd, lambda *_: None)
    os.close(write_fd)  # the read end closes with the Wire's reader

"""The wire between the hidden tests and the answer's code, which never share a process.

Each hidden test runs in two processes that the harness forks (see ``sandbox_harness``): the
*answer's* process executes the model's program and serves calls; the *tests'* process executes
the hidden tests (and a HumanEval stub: trusted code) and alone writes the verdict, to a pipe the
answer's process never holds. In the tests' process the names the tests take from the solution
(``candidate``'s function, a class to test) are ``Remote`` proxies: calling one sends the call to
the answer's process and waits for its reply.

Only plain data crosses, one JSON object per line: None, booleans, numbers and strings as
themselves; lists, tuples, dicts, sets, frozensets, bytes and complex numbers as one-key objects
(``{"l": [...]}``...); an exception as its built-in class names and message; anything else as a
handle, a number naming an object that stays in its own process. Nothing is unpickled or
evaluated. So a value from the answer is built of built-in types whose comparisons are Python's
own (an object whose ``__eq__`` always says True cannot cross), and a handle's proxy compares by
identity, is always true and never suppresses an exception (``__exit__``); an exception from the
answer becomes the first built-in ``Exception`` class it names (``RemoteError`` if none), so
``except ValueError`` in a test works and ``SystemExit`` cannot end the tests.

What the answer's process can do to the tests' process: reply to its requests, and call back the
objects the tests handed it (a fake clock), nothing else: it may not read their attributes,
except public ones of classes the hidden tests define (no frame, module or global is reachable).
A line that is not a well-formed reply, a reply too long, or the end of the pipe breaks the wire:
``AnswerLost`` is raised (a ``BaseException``, so ``except Exception`` in a test does not swallow
it) and the test fails whatever else it does.

Known differences from running in one process: arguments are copied (a function that sorts its
argument in place is not seen to), a returned list of objects is one handle (indexable and
iterable, but not equal to a list), calls are answered one at a time (threads of the tests take
turns, and awaiting two of the answer's coroutines at once runs them one after the other), and
the answer's ``__exit__``/``__aexit__`` is told of no exception's traceback.

Standard library only: the harness runs this module's text inside the sandbox.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import importlib
import inspect
import json
import os
import sys
import threading
import traceback
import types
from collections.abc import Callable
from typing import Any, NoReturn

MAX_LINE_BYTES = 16 << 20  # one message; the answer's memory limit bounds it anyway
ENDED = "the other process ended"  # why the wire broke when the answer's process exited
_MESSAGE_CHARS = 300
_REASON_CHARS = 160
_ENCODE_DEPTH = 200  # deeper (or cyclic) values cross as handles
_PROTOCOL_METHODS = frozenset(
    {
        "__iter__",
        "__next__",
        "__len__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__contains__",
        "__enter__",
        "__exit__",
        "__aenter__",
        "__aexit__",
    }
)
_CONTAINERS: dict[type, str] = {list: "l", tuple: "t", set: "s", frozenset: "f"}
_BUILDERS: dict[str, Callable[[list[Any]], Any]] = {
    "l": list,
    "t": tuple,
    "s": set,
    "f": frozenset,
}


class AnswerLost(BaseException):
    """The answer's process broke the wire: it ended, or wrote what is no reply."""


class RemoteError(Exception):
    """An exception of the other process's that names no built-in Exception class."""


class WireError(Exception):
    """A message that is not one this protocol sends."""


def reason(error: BaseException, tests_source: str) -> str:
    """One line saying why a test failed: the failing assert's line, or the exception."""
    if isinstance(error, AssertionError) and not str(error):
        lines = tests_source.splitlines()
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if frame.filename == "hidden_tests.py" and frame.lineno and frame.lineno <= len(lines):
                return "assert failed: " + lines[frame.lineno - 1].strip()
        return "assert failed"
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text[:_REASON_CHARS]


def _exception_data(error: BaseException) -> dict[str, Any]:
    kinds = [c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins"]
    return {"x": [[type(error).__name__, *kinds], str(error)[:_MESSAGE_CHARS]]}


def _builtin_exception(name: Any) -> type[Exception] | None:
    found = getattr(builtins, name, None) if isinstance(name, str) else None
    return found if isinstance(found, type) and issubclass(found, Exception) else None


def _exception(body: Any) -> Exception:
    if not (isinstance(body, list) and len(body) == 2 and isinstance(body[1], str)):
        raise WireError("an exception is [names, message]")
    names, message = body
    if not isinstance(names, list) or not names:
        raise WireError("an exception names its classes")
    for name in names:
        kind = _builtin_exception(name)
        if kind is not None:
            with contextlib.suppress(Exception):  # a class that wants other arguments
                return kind(message[:_MESSAGE_CHARS])
    return RemoteError(f"{str(names[0])[:40]}: {message[:_MESSAGE_CHARS]}")


def _module_name(value: types.ModuleType) -> str | None:
    name = value.__name__
    return name if name.partition(".")[0] in sys.stdlib_module_names else None


def _stdlib_module(name: Any) -> types.ModuleType:
    if not isinstance(name, str) or name.partition(".")[0] not in sys.stdlib_module_names:
        raise WireError("a module crosses only by a standard library name")
    try:
        return sys.modules.get(name) or importlib.import_module(name)
    except Exception as error:
        raise WireError(f"module {name[:40]}: {error}") from None


class Remote:
    """An object of the other process, reached through the wire; identity is its equality."""

    __slots__ = ("__weakref__", "_methods", "_ref", "_wire")

    def __init__(self, wire: Wire, ref: int) -> None:
        object.__setattr__(self, "_wire", wire)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_methods", {})  # name -> the bound method's proxy

    def _ask(self, op: str, **fields: Any) -> Any:
        return self._wire.request({"q": op, "o": self._ref, **fields})

    def _method(self, name: str, *args: Any) -> Any:
        try:
            return self._ask("method", n=name, a=self._wire.encode(list(args)))
        except AttributeError:  # as Python says of an object without the method: list() asks
            raise TypeError(f"the answer's object has no {name}") from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name in self._methods:
            return self._methods[name]
        value, is_method = self._wire.exchange({"q": "getattr", "o": self._ref, "n": name})
        if is_method and isinstance(value, Remote):  # one round trip per later call, not two
            self._methods[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._ask("setattr", n=name, v=self._wire.encode(value))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask("call", a=self._wire.encode(list(args)), k=self._wire.encode(kwargs))

    def __repr__(self) -> str:
        return f"<the answer's object {self._ref}>"

    def __bool__(self) -> bool:
        return True

    def __iter__(self) -> Any:
        return self._method("__iter__")

    def __next__(self) -> Any:
        return self._method("__next__")

    def __len__(self) -> int:
        size = self._method("__len__")
        if type(size) is not int or size < 0:
            raise TypeError("__len__ should return an int >= 0")
        return size

    def __getitem__(self, key: Any) -> Any:
        return self._method("__getitem__", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._method("__setitem__", key, value)

    def __delitem__(self, key: Any) -> None:
        self._method("__delitem__", key)

    def __contains__(self, item: Any) -> bool:
        return bool(self._method("__contains__", item))

    def __enter__(self) -> Any:
        return self._method("__enter__")

    def __exit__(self, kind: Any, error: Any, _traceback: Any) -> None:
        # Returns None whatever the answer's returned: it never hides a test's exception.
        self._method("__exit__", kind, error, None)

    async def __aenter__(self) -> Any:
        return await self._method("__aenter__")

    async def __aexit__(self, kind: Any, error: Any, _traceback: Any) -> None:
        await self._method("__aexit__", kind, error, None)

    def __await__(self) -> Any:
        """Await the answer's awaitable there; a thread waits on the wire, not the loop."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def wait() -> None:
            try:
                settle: tuple[Callable[[Any], None], Any] = (
                    future.set_result,
                    self._ask("await"),
                )
            except BaseException as error:  # AnswerLost too: the test must see it
                failure = RuntimeError(str(error)) if isinstance(error, StopIteration) else error
                settle = (future.set_exception, failure)
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(_settle, future, *settle)

        threading.Thread(target=wait, daemon=True).start()
        return future.__await__()


def _settle(future: asyncio.Future[Any], setter: Callable[[Any], None], value: Any) -> None:
    if not future.done():
        setter(value)


class ClassMethod:
    """What a serve function returns for a method its class defines: the proxy may keep it."""

    __slots__ = ("method",)

    def __init__(self, method: Any) -> None:
        self.method = method


class Wire:
    """One end of the wire: requests to the other process, and the objects each side holds.

    ``serve`` answers the other side's requests (those that arrive while this side waits for a
    reply); it returns the value to send back or raises what to send back.
    """

    def __init__(self, read_fd: int, write_fd: int, serve: Callable[[Wire, dict[str, Any]], Any]):
        self._reader = os.fdopen(read_fd, "rb")
        self._write_fd = write_fd
        self._serve = serve
        self._lock = threading.RLock()  # one exchange at a time; nested callbacks re-enter
        self._own: dict[int, Any] = {}
        self._refs: dict[int, int] = {}  # id() of an object handed out -> its ref
        self._remotes: dict[int, Remote] = {}
        self.lost = ""  # why the wire broke; "" while it holds

    def request(self, message: dict[str, Any]) -> Any:
        return self.exchange(message)[0]

    def exchange(self, message: dict[str, Any]) -> tuple[Any, bool]:
        """The reply's value, and whether the other side called it a method of its class's."""
        with self._lock:
            self._send(message)
            while True:
                incoming = self._receive()
                if "q" in incoming:
                    self._send(self._answer(incoming))
                elif incoming.keys() in ({"ok"}, {"ok", "method"}):
                    return self._decode(incoming["ok"]), incoming.get("method") is True
                elif incoming.keys() == {"err"}:
                    error = self._decode(incoming["err"])
                    if not isinstance(error, Exception):
                        self._break("an error reply that holds no exception")
                    raise error
                else:
                    self._break("a message that is neither a request nor a reply")

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the wire (the answer's process)."""
        while True:
            self._send(self._answer(self._receive()))

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            value = self._serve(self, request)
            if isinstance(value, ClassMethod):
                return {"ok": self.encode(value.method), "method": True}
            return {"ok": self.encode(value)}
        except AnswerLost:
            raise
        except WireError as error:
            self._break(f"a request that is not one this wire sends ({error})")
        except BaseException as error:
            return {"err": _exception_data(error)}

    def _break(self, why: str) -> NoReturn:
        self.lost = self.lost or why
        raise AnswerLost(self.lost)

    def _send(self, message: dict[str, Any]) -> None:
        if self.lost:
            raise AnswerLost(self.lost)
        data = memoryview(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        try:
            while data:
                data = data[os.write(self._write_fd, data) :]
        except OSError as error:
            self._break(f"the other process stopped reading ({error.strerror})")

    def _receive(self) -> dict[str, Any]:
        if self.lost:
            raise AnswerLost(self.lost)
        try:
            line = self._reader.readline(MAX_LINE_BYTES + 1)
        except OSError as error:
            self._break(f"reading the wire failed ({error.strerror})")
        if not line:
            self._break(ENDED)
        if len(line) > MAX_LINE_BYTES:
            self._break(f"a message over {MAX_LINE_BYTES >> 20} MiB")
        if not line.endswith(b"\n"):
            self._break("a line cut off by the end of the wire")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._break("a line that is not JSON")
        if not isinstance(message, dict):
            self._break("a message that is not an object")
        return message

    def own(self, ref: Any) -> Any:
        """This side's object that ``ref`` names."""
        if type(ref) is not int or ref not in self._own:
            raise WireError("a reference to no object of ours")
        return self._own[ref]

    def encode(self, value: Any, depth: int = 0) -> Any:
        kind = type(value)
        if value is None or kind in (bool, int, float, str):
            return value
        if depth < _ENCODE_DEPTH:
            if kind in _CONTAINERS:
                return {_CONTAINERS[kind]: [self.encode(v, depth + 1) for v in value]}
            if kind is dict:
                pairs = [
                    [self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()
                ]
                return {"d": pairs}
        if kind is bytes:
            return {"b": value.hex()}
        if kind is complex:
            return {"c": [value.real, value.imag]}
        if isinstance(value, BaseException):
            return _exception_data(value)
        if isinstance(value, type) and value is _builtin_exception(kind_name := value.__name__):
            return {"X": kind_name}
        if isinstance(value, types.TracebackType | types.FrameType):
            return None
        if isinstance(value, types.ModuleType) and (name := _module_name(value)):
            return {"m": name}
        if isinstance(value, Remote) and value._wire is self:
            return {"r": value._ref}
        ref = self._refs.get(id(value))
        if ref is None:
            ref = self._refs[id(value)] = len(self._own)
            self._own[ref] = value  # kept alive, so id() is not reused while the wire lasts
        return {"h": ref}

    def _decode(self, data: Any) -> Any:
        try:
            return self.decode(data)
        except WireError as error:
            self._break(str(error))

    def decode(self, data: Any) -> Any:
        """The value ``data`` holds; raises WireError for anything this wire does not send."""
        try:
            return self._value(data)
        except (ValueError, TypeError, RecursionError, MemoryError) as error:
            raise WireError(f"a value that is not plain data ({str(error)[:80]})") from None

    def _value(self, data: Any) -> Any:
        kind = type(data)
        if data is None or kind in (bool, int, float, str):
            return data
        if kind is not dict or len(data) != 1:
            raise WireError("a value is plain JSON or a one-key object")
        ((tag, body),) = data.items()
        if tag in _BUILDERS or tag == "d":
            if type(body) is not list:
                raise WireError(f"{tag!r} holds a list")
            if tag != "d":
                return _BUILDERS[tag]([self._value(v) for v in body])
            if not all(type(pair) is list and len(pair) == 2 for pair in body):
                raise WireError("a dict is a list of [key, value] pairs")
            return {self._value(k): self._value(v) for k, v in body}
        if tag == "b" and type(body) is str:
            return bytes.fromhex(body)
        pair = type(body) is list and len(body) == 2
        if tag == "c" and pair and all(type(part) in (int, float) for part in body):
            return complex(*body)
        if tag == "x":
            return _exception(body)
        if tag == "X" and (found := _builtin_exception(body)) is not None:
            return found
        if tag == "m":
            return _stdlib_module(body)
        if tag == "r":
            return self.own(body)
        if tag == "h" and type(body) is int:
            return self._remotes.setdefault(body, Remote(self, body))
        raise WireError(f"no value is tagged {str(tag)[:20]!r} like this")


def _args(wire: Wire, request: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    args = wire.decode(request.get("a", {"l": []}))
    kwargs = wire.decode(request.get("k", {"d": []}))
    if type(args) is not list or type(kwargs) is not dict:
        raise WireError("arguments are a list and a dict")
    if not all(type(key) is str for key in kwargs):
        raise WireError("keyword arguments are named by strings")
    return args, kwargs


def _name(request: dict[str, Any]) -> str:
    name = request.get("n")
    if type(name) is not str:
        raise WireError("an attribute is named by a string")
    return name


# The answer's process -----------------------------------------------------------------------


def serve_answer(solution: str, read_fd: int, write_fd: int) -> None:
    """Run the model's program as module ``solution`` and answer the tests' requests."""
    module = types.ModuleType("solution")
    module.__file__ = os.path.abspath("solution.py")
    sys.modules["solution"] = module
    failure: BaseException | None = None
    try:
        exec(compile(solution, "solution.py", "exec"), module.__dict__)
    except BaseException as error:
        failure = error
    loop: list[asyncio.AbstractEventLoop] = []

    def serve(wire: Wire, request: dict[str, Any]) -> Any:
        op = request.get("q")
        if op == "names":
            if failure is not None:
                raise failure
            wanted = wire.decode(request.get("a"))
            if type(wanted) is not list:
                raise WireError("names are asked for in a list")
            return {n: module.__dict__[n] for n in wanted if n in module.__dict__}
        target = wire.own(request.get("o"))
        if op == "call":
            args, kwargs = _args(wire, request)
            return target(*args, **kwargs)
        if op == "getattr":
            name = _name(request)
            value = getattr(target, name)
            defined = inspect.getattr_static(type(target), name, None)
            is_method = inspect.ismethod(value) and inspect.isfunction(defined)
            return ClassMethod(value) if is_method else value
        if op == "setattr":
            setattr(target, _name(request), wire.decode(request.get("v")))
            return None
        if op == "method":
            args, _ = _args(wire, request)
            return getattr(target, _name(request))(*args)
        if op == "await":
            if not loop:
                loop.append(asyncio.new_event_loop())
            return loop[0].run_until_complete(_awaited(target))
        raise WireError(f"no request {str(op)[:20]!r}")

    Wire(read_fd, write_fd, serve).serve_forever()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


# The tests' process -------------------------------------------------------------------------


def _serve_the_answer(wire: Wire, request: dict[str, Any]) -> Any:
    """The answer may call back what the tests handed it, and read no attribute but public
    ones of the hidden tests' own classes: from anything else a frame or global is reachable."""
    target = wire.own(request.get("o"))
    if request.get("q") == "call":
        args, kwargs = _args(wire, request)
        return target(*args, **kwargs)
    if request.get("q") == "getattr":
        name = _name(request)
        if name.startswith("_") or type(target).__module__ != "hidden_tests":
            raise AttributeError(f"{name[:40]} is not readable from the answer")
        return getattr(target, name)
    raise PermissionError("the tests' objects may only be called")


def run_test(job: dict[str, Any], name: str, read_fd: int, write_fd: int) -> dict[str, Any]:
    """Run hidden test ``name`` against the answer's process; the verdict, decided here.

    ``job["stub"]`` (trusted, may be None) runs first; then the names in ``job["wanted"]``
    that the answer's program defines are bound to what it replies.
    """
    wire = Wire(read_fd, write_fd, _serve_the_answer)
    namespace: dict[str, Any] = {"__name__": "hidden_tests"}
    try:
        exec(compile(job.get("stub") or "", "stub.py", "exec"), namespace)
        names = wire.request({"q": "names", "a": wire.encode(list(job["wanted"]))})
    except AnswerLost:
        return {"outcome": "failed", "reason": wire.lost, "lost": wire.lost}
    except BaseException as error:
        return {"outcome": "failed", "reason": "solution: " + reason(error, "")}
    if type(names) is not dict:
        return {"outcome": "failed", "reason": "the answer replied no names", "lost": "no names"}
    answered = {n: v for n, v in names.items() if n in job["wanted"]}
    solution = types.ModuleType("solution")
    solution.__dict__.update(answered)
    sys.modules["solution"] = solution
    namespace.update(answered)
    try:
        exec(compile(job["tests"], "hidden_tests.py", "exec"), namespace)
        result = namespace[name]()
        if inspect.iscoroutine(result):
            asyncio.run(result)
    except BaseException as error:
        if wire.lost:
            return {"outcome": "failed", "reason": wire.lost, "lost": wire.lost}
        return {"outcome": "failed", "reason": reason(error, job["tests"])}
    if wire.lost:  # a bare except in the test swallowed AnswerLost
        return {"outcome": "failed", "reason": wire.lost, "lost": wire.lost}
    return {"outcome": "passed", "reason": ""}

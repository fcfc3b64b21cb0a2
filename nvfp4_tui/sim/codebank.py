"""Python snippets the simulated models assemble into coding answers, with their own tests.

Every snippet is correct as written and its asserts pass; a snippet's ``flaw`` is a one-line
change a weaker model makes that breaks one of them, so a verifying scorer has something to
catch. ``plain`` is the signature without type hints, used when a model skips them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snippet:
    name: str
    keywords: frozenset[str]
    imports: tuple[str, ...]
    typed: str  # first line(s) of the definition, with type hints
    plain: str  # the same without hints
    doc: str  # docstring lines, without quotes or indentation
    body: str  # indented body (4 spaces)
    tests: tuple[str, ...]  # statements of the test function, unindented
    summary: str
    complexity: str
    is_async: bool = False
    typevars: tuple[str, ...] = ()  # module-level TypeVars the snippet uses
    flaw: tuple[str, str] | None = None  # (text in body, replacement) that breaks a test


def _kw(words: str) -> frozenset[str]:
    return frozenset(words.split())


SNIPPETS: tuple[Snippet, ...] = (
    Snippet(
        name="chunked",
        keywords=_kw("batch batches chunk chunks split list iterable group"),
        imports=("from collections.abc import Iterable, Iterator",),
        typed="def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:",
        plain="def chunked(items, size):",
        doc="Yield lists of at most ``size`` items, in order.",
        body=(
            "    if size < 1:\n"
            '        raise ValueError(f"size must be >= 1, got {size}")\n'
            "    batch: list[T] = []\n"
            "    for item in items:\n"
            "        batch.append(item)\n"
            "        if len(batch) == size:\n"
            "            yield batch\n"
            "            batch = []\n"
            "    if batch:\n"
            "        yield batch\n"
        ),
        tests=(
            "assert list(chunked(range(5), 2)) == [[0, 1], [2, 3], [4]]",
            "assert list(chunked([], 3)) == []",
            "try:\n    list(chunked([1], 0))\nexcept ValueError:\n    pass\n"
            'else:\n    raise AssertionError("size 0 must be rejected")',
        ),
        summary="splits any iterable into fixed-size batches without loading it whole",
        complexity="O(n) time, O(size) extra memory",
        typevars=("T",),
        flaw=("    if batch:\n        yield batch\n", ""),
    ),
    Snippet(
        name="moving_average",
        keywords=_kw("average mean window smoothing series metrics rolling statistics"),
        imports=("from collections import deque",),
        typed="def moving_average(values: list[float], window: int) -> list[float]:",
        plain="def moving_average(values, window):",
        doc="Mean of each full window of ``window`` consecutive values.",
        body=(
            "    if window < 1:\n"
            '        raise ValueError("window must be positive")\n'
            "    recent: deque[float] = deque()\n"
            "    total = 0.0\n"
            "    means: list[float] = []\n"
            "    for value in values:\n"
            "        recent.append(value)\n"
            "        total += value\n"
            "        if len(recent) > window:\n"
            "            total -= recent.popleft()\n"
            "        if len(recent) == window:\n"
            "            means.append(total / window)\n"
            "    return means\n"
        ),
        tests=(
            "assert moving_average([1.0, 2.0, 3.0, 4.0], 2) == [1.5, 2.5, 3.5]",
            "assert moving_average([5.0], 3) == []",
        ),
        summary="keeps a running total so each new window costs O(1)",
        complexity="O(n) time, O(window) memory",
        flaw=("        if len(recent) == window:", "        if len(recent) >= window - 1:"),
    ),
    Snippet(
        name="parse_duration",
        keywords=_kw("parse parser duration time string config timeout seconds"),
        imports=("import re",),
        typed="def parse_duration(text: str) -> float:",
        plain="def parse_duration(text):",
        doc='Seconds in a duration such as ``"1h30m"``, ``"45s"`` or ``"2.5m"``.',
        body=(
            '    units = {"h": 3600.0, "m": 60.0, "s": 1.0}\n'
            '    parts = re.findall(r"(\\d+(?:\\.\\d+)?)([hms])", text.strip())\n'
            '    if not parts or "".join(n + u for n, u in parts) != text.strip():\n'
            '        raise ValueError(f"not a duration: {text!r}")\n'
            "    return sum(float(number) * units[unit] for number, unit in parts)\n"
        ),
        tests=(
            'assert parse_duration("1h30m") == 5400.0',
            'assert parse_duration("2.5m") == 150.0',
            'try:\n    parse_duration("soon")\nexcept ValueError:\n    pass\n'
            'else:\n    raise AssertionError("garbage must be rejected")',
        ),
        summary="accepts only strings made entirely of number-unit pairs, so typos fail loudly",
        complexity="O(len(text))",
        flaw=('"m": 60.0', '"m": 100.0'),
    ),
    Snippet(
        name="topological_order",
        keywords=_kw("dependency dependencies graph dag order cycle scheduler tasks topological"),
        imports=("from collections.abc import Mapping",),
        typed="def topological_order(graph: Mapping[str, set[str]]) -> list[str]:",
        plain="def topological_order(graph):",
        doc=(
            "Nodes ordered so each comes after its dependencies.\n"
            "\n"
            "``graph`` maps a node to the nodes it depends on; a cycle raises ValueError."
        ),
        body=(
            "    nodes = set(graph) | {d for deps in graph.values() for d in deps}\n"
            "    waiting = {node: set(graph.get(node, ())) for node in nodes}\n"
            "    order: list[str] = []\n"
            "    ready = sorted(node for node, deps in waiting.items() if not deps)\n"
            "    while ready:\n"
            "        node = ready.pop(0)\n"
            "        order.append(node)\n"
            "        for other, deps in waiting.items():\n"
            "            if node in deps:\n"
            "                deps.discard(node)\n"
            "                if not deps:\n"
            "                    ready.append(other)\n"
            "        ready.sort()\n"
            "    if len(order) != len(nodes):\n"
            "        stuck = sorted(set(nodes) - set(order))\n"
            '        raise ValueError(f"dependency cycle among {stuck}")\n'
            "    return order\n"
        ),
        tests=(
            'assert topological_order({"b": {"a"}, "c": {"b"}}) == ["a", "b", "c"]',
            'try:\n    topological_order({"a": {"b"}, "b": {"a"}})\nexcept ValueError:\n'
            '    pass\nelse:\n    raise AssertionError("a cycle must be detected")',
        ),
        summary="Kahn's algorithm with a sorted ready list, so ties resolve deterministically",
        complexity="O(V * E) as written; an indegree index makes it O(V + E)",
        flaw=("    if len(order) != len(nodes):", "    if len(order) > len(nodes):"),
    ),
    Snippet(
        name="TokenBucket",
        keywords=_kw("rate limit limiter throttle bucket requests api quota"),
        imports=("import asyncio", "import time", "from collections.abc import Callable"),
        typed="class TokenBucket:",
        plain="class TokenBucket:",
        doc="Allows ``rate`` events per second with bursts up to ``capacity``.",
        body=(
            "    def __init__(\n"
            "        self,\n"
            "        rate: float,\n"
            "        capacity: float,\n"
            "        clock: Callable[[], float] = time.monotonic,\n"
            "    ) -> None:\n"
            "        if rate <= 0 or capacity <= 0:\n"
            '            raise ValueError("rate and capacity must be positive")\n'
            "        self.rate = rate\n"
            "        self.capacity = capacity\n"
            "        self._clock = clock\n"
            "        self._tokens = capacity\n"
            "        self._last = clock()\n"
            "\n"
            "    def try_acquire(self, cost: float = 1.0) -> bool:\n"
            "        now = self._clock()\n"
            "        elapsed = now - self._last\n"
            "        self._last = now\n"
            "        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)\n"
            "        if self._tokens >= cost:\n"
            "            self._tokens -= cost\n"
            "            return True\n"
            "        return False\n"
            "\n"
            "    async def acquire(self, tokens: int = 1) -> None:\n"
            "        if tokens < 1 or tokens > self.capacity:\n"
            '            raise ValueError(f"tokens must be 1..{self.capacity}, got {tokens}")\n'
            "        while not self.try_acquire(tokens):\n"
            "            await asyncio.sleep((tokens - self._tokens) / self.rate)\n"
            "\n"
            '    async def __aenter__(self) -> "TokenBucket":\n'
            "        await self.acquire()\n"
            "        return self\n"
            "\n"
            "    async def __aexit__(self, *exc_info: object) -> None:\n"
            "        return None\n"
        ),
        tests=(
            "now = [0.0]\nbucket = TokenBucket(rate=2.0, capacity=2.0, clock=lambda: now[0])",
            "assert bucket.try_acquire() and bucket.try_acquire()",
            "assert not bucket.try_acquire()",
            "now[0] = 0.5\nassert bucket.try_acquire()",
            "fresh = TokenBucket(rate=1000.0, capacity=1.0)\nasyncio.run(fresh.acquire())",
            "try:\n    asyncio.run(fresh.acquire(0))\nexcept ValueError:\n    pass\n"
            'else:\n    raise AssertionError("acquire(0) must be rejected")',
        ),
        summary="refills lazily on each call and takes an injectable clock so tests need no "
        "sleeps; acquire() awaits the refill, and async with takes one token",
        complexity="O(1) per call",
        is_async=True,
        flaw=(
            "        if tokens < 1 or tokens > self.capacity:",
            "        if tokens > self.capacity:",
        ),
    ),
    Snippet(
        name="LRUCache",
        keywords=_kw("cache lru memo memoize eviction store lookup"),
        imports=("from collections import OrderedDict", "from typing import Generic"),
        typed="class LRUCache(Generic[K, V]):",
        plain="class LRUCache(Generic[K, V]):",
        doc="A mapping that forgets its least recently used entry beyond ``max_size``.",
        body=(
            "    def __init__(self, max_size: int) -> None:\n"
            "        if max_size < 1:\n"
            '            raise ValueError("max_size must be >= 1")\n'
            "        self.max_size = max_size\n"
            "        self._items: OrderedDict[K, V] = OrderedDict()\n"
            "\n"
            "    def get(self, key: K) -> V | None:\n"
            "        if key not in self._items:\n"
            "            return None\n"
            "        self._items.move_to_end(key)\n"
            "        return self._items[key]\n"
            "\n"
            "    def put(self, key: K, value: V) -> None:\n"
            "        self._items[key] = value\n"
            "        self._items.move_to_end(key)\n"
            "        while len(self._items) > self.max_size:\n"
            "            self._items.popitem(last=False)\n"
        ),
        tests=(
            "cache: LRUCache[str, int] = LRUCache(2)",
            'cache.put("a", 1)\ncache.put("b", 2)\nassert cache.get("a") == 1',
            'cache.put("c", 3)\nassert cache.get("b") is None and cache.get("c") == 3',
        ),
        summary="uses OrderedDict.move_to_end so both reads and writes refresh recency",
        complexity="O(1) per get and put",
        typevars=("K", "V"),
        flaw=("            self._items.popitem(last=False)", "            self._items.popitem()"),
    ),
    Snippet(
        name="TTLCache",
        keywords=_kw("cache lru ttl ttlcache expiry expired expire eviction clock thread safe"),
        imports=(
            "import threading",
            "import time",
            "from collections import OrderedDict",
            "from collections.abc import Callable, Hashable",
            "from typing import Any",
        ),
        typed="class TTLCache:",
        plain="class TTLCache:",
        doc="A thread-safe LRU cache whose entries expire ``ttl_s`` seconds after they are put.",
        body=(
            "    def __init__(\n"
            "        self,\n"
            "        max_size: int,\n"
            "        ttl_s: float,\n"
            "        clock: Callable[[], float] = time.monotonic,\n"
            "    ) -> None:\n"
            "        if max_size < 1 or ttl_s <= 0:\n"
            '            raise ValueError("max_size must be >= 1 and ttl_s > 0")\n'
            "        self.max_size = max_size\n"
            "        self.ttl_s = ttl_s\n"
            "        self._clock = clock\n"
            "        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()\n"
            "        self._lock = threading.Lock()\n"
            "\n"
            "    def get(self, key: Hashable, default: Any = None) -> Any:\n"
            "        with self._lock:\n"
            "            entry = self._entries.get(key)\n"
            "            if entry is None:\n"
            "                return default\n"
            "            expires, value = entry\n"
            "            if self._clock() >= expires:\n"
            "                del self._entries[key]\n"
            "                return default\n"
            "            self._entries.move_to_end(key)\n"
            "            return value\n"
            "\n"
            "    def put(self, key: Hashable, value: Any) -> None:\n"
            "        with self._lock:\n"
            "            self._entries[key] = (self._clock() + self.ttl_s, value)\n"
            "            self._entries.move_to_end(key)\n"
            "            while len(self._entries) > self.max_size:\n"
            "                self._entries.popitem(last=False)\n"
        ),
        tests=(
            "now = [0.0]\ncache = TTLCache(2, 10.0, clock=lambda: now[0])",
            'cache.put("a", 1)\ncache.put("b", 2)\nassert cache.get("a") == 1',
            'cache.put("c", 3)\nassert cache.get("b") is None and cache.get("c") == 3',
            'now[0] = 10.5\nassert cache.get("a") is None',
        ),
        summary="an OrderedDict under one lock; each entry keeps its expiry time, checked on read",
        complexity="O(1) per get and put",
        flaw=(
            "            if self._clock() >= expires:",
            "            if self._clock() >= expires + self.ttl_s:",
        ),
    ),
    Snippet(
        name="merge_intervals",
        keywords=_kw("interval intervals merge overlap ranges calendar booking"),
        imports=(),
        typed="def merge_intervals(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:",
        plain="def merge_intervals(spans):",
        doc="Union of closed intervals, sorted, with touching intervals joined.",
        body=(
            "    merged: list[tuple[int, int]] = []\n"
            "    for start, end in sorted(spans):\n"
            "        if start > end:\n"
            '            raise ValueError(f"empty interval ({start}, {end})")\n'
            "        if merged and start <= merged[-1][1]:\n"
            "            merged[-1] = (merged[-1][0], max(merged[-1][1], end))\n"
            "        else:\n"
            "            merged.append((start, end))\n"
            "    return merged\n"
        ),
        tests=(
            "assert merge_intervals([(5, 8), (1, 3), (2, 4)]) == [(1, 4), (5, 8)]",
            "assert merge_intervals([(1, 2), (2, 3)]) == [(1, 3)]",
            "assert merge_intervals([(1, 10), (2, 3)]) == [(1, 10)]",
        ),
        summary="sorts once, then extends the last merged interval or starts a new one",
        complexity="O(n log n) for the sort, O(n) after it",
        flaw=("max(merged[-1][1], end)", "end"),
    ),
    Snippet(
        name="retry_async",
        keywords=_kw("retry backoff async asyncio network transient failure resilient"),
        imports=("import asyncio", "from collections.abc import Awaitable, Callable"),
        typed=(
            "async def retry_async(\n"
            "    attempt: Callable[[], Awaitable[T]],\n"
            "    tries: int = 3,\n"
            "    base_delay_s: float = 0.01,\n"
            ") -> T:"
        ),
        plain="async def retry_async(attempt, tries=3, base_delay_s=0.01):",
        doc="Await ``attempt`` up to ``tries`` times, doubling the pause after each failure.",
        body=(
            "    if tries < 1:\n"
            '        raise ValueError("tries must be >= 1")\n'
            "    for number in range(1, tries + 1):\n"
            "        try:\n"
            "            return await attempt()\n"
            "        except (ConnectionError, TimeoutError):\n"
            "            if number == tries:\n"
            "                raise\n"
            "            await asyncio.sleep(base_delay_s * 2 ** (number - 1))\n"
            '    raise AssertionError("unreachable")\n'
        ),
        tests=(
            "calls = []\n\n\nasync def flaky() -> str:\n    calls.append(1)\n"
            "    if len(calls) < 3:\n"
            '        raise ConnectionError("try again")\n    return "ok"',
            'assert asyncio.run(retry_async(flaky, tries=3, base_delay_s=0.0)) == "ok"',
            "assert len(calls) == 3",
        ),
        summary="retries only errors that are worth retrying and re-raises the last one",
        complexity="at most `tries` attempts; total pause base * (2**(tries-1) - 1)",
        is_async=True,
        typevars=("T",),
        flaw=("            if number == tries:", "            if number == tries - 1:"),
    ),
    Snippet(
        name="word_frequencies",
        keywords=_kw("word words count frequency text tokens histogram nlp"),
        imports=("import re", "from collections import Counter"),
        typed="def word_frequencies(text: str, top: int = 3) -> list[tuple[str, int]]:",
        plain="def word_frequencies(text, top=3):",
        doc="The ``top`` most common lowercase words, ties broken alphabetically.",
        body=(
            '    words = re.findall(r"[a-z\']+", text.lower())\n'
            "    counts = Counter(words)\n"
            "    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]\n"
        ),
        tests=(
            'assert word_frequencies("b a b c a b", top=2) == [("b", 3), ("a", 2)]',
            'assert word_frequencies("") == []',
        ),
        summary="normalises case before counting and sorts ties so results are stable",
        complexity="O(n + k log k) for n characters and k distinct words",
        flaw=("key=lambda kv: (-kv[1], kv[0])", "key=lambda kv: (kv[1], kv[0])"),
    ),
    Snippet(
        name="bisect_left_index",
        keywords=_kw("search binary sorted index find lookup bisect array"),
        imports=("from collections.abc import Sequence",),
        typed="def bisect_left_index(items: Sequence[int], target: int) -> int:",
        plain="def bisect_left_index(items, target):",
        doc="First index at which ``target`` could be inserted keeping ``items`` sorted.",
        body=(
            "    low, high = 0, len(items)\n"
            "    while low < high:\n"
            "        middle = (low + high) // 2\n"
            "        if items[middle] < target:\n"
            "            low = middle + 1\n"
            "        else:\n"
            "            high = middle\n"
            "    return low\n"
        ),
        tests=(
            "assert bisect_left_index([1, 3, 3, 7], 3) == 1",
            "assert bisect_left_index([1, 3, 3, 7], 8) == 4",
            "assert bisect_left_index([], 5) == 0",
        ),
        summary="a half-open search window that cannot loop forever",
        complexity="O(log n)",
        flaw=("        if items[middle] < target:", "        if items[middle] <= target:"),
    ),
    Snippet(
        name="PriorityScheduler",
        keywords=_kw(
            "scheduler schedule priority queue concurrent concurrency semaphore task tasks "
            "async asyncio worker"
        ),
        imports=("import asyncio", "import heapq", "from collections.abc import Awaitable"),
        typed="class PriorityScheduler:",
        plain="class PriorityScheduler:",
        doc=(
            "Runs submitted coroutines by priority (lower first), at most ``limit`` at once.\n"
            "\n"
            "Equal priorities keep submission order; one failure does not stop the others."
        ),
        body=(
            "    def __init__(self, limit: int) -> None:\n"
            "        if limit < 1:\n"
            '            raise ValueError("limit must be >= 1")\n'
            "        self._limit = asyncio.Semaphore(limit)\n"
            "        self._heap: list[tuple[int, int, Awaitable[object]]] = []\n"
            "        self._counter = 0\n"
            "\n"
            "    def submit(self, job: Awaitable[object], priority: int = 0) -> None:\n"
            "        heapq.heappush(self._heap, (priority, self._counter, job))\n"
            "        self._counter += 1\n"
            "\n"
            "    async def _run_one(self, job: Awaitable[object]) -> object:\n"
            "        async with self._limit:\n"
            "            return await job\n"
            "\n"
            "    async def run(self) -> list[object]:\n"
            "        ordered = [heapq.heappop(self._heap)[2] for _ in range(len(self._heap))]\n"
            "        return await asyncio.gather(\n"
            "            *(self._run_one(job) for job in ordered), return_exceptions=True\n"
            "        )\n"
        ),
        tests=(
            "async def square(x: int) -> int:\n    await asyncio.sleep(0)\n    return x * x",
            'async def fail() -> int:\n    raise RuntimeError("boom")',
            "async def main() -> list[object]:\n    scheduler = PriorityScheduler(limit=2)\n"
            "    scheduler.submit(square(3), priority=2)\n"
            "    scheduler.submit(fail(), priority=1)\n"
            "    scheduler.submit(square(2), priority=0)\n"
            "    return await scheduler.run()",
            "results = asyncio.run(main())",
            "assert results[0] == 4 and results[2] == 9",
            "assert isinstance(results[1], RuntimeError)",
        ),
        summary="a heap orders the jobs and a semaphore caps how many run at the same time",
        complexity="O(n log n) to order n jobs; concurrency bounded by `limit`",
        is_async=True,
        flaw=(
            "            *(self._run_one(job) for job in ordered), return_exceptions=True\n",
            "            *(self._run_one(job) for job in ordered)\n",
        ),
    ),
    Snippet(
        name="flatten",
        keywords=_kw("flatten nested list tree recursive recursion json structure"),
        imports=("from typing import Any",),
        typed="def flatten(nested: list[Any]) -> list[Any]:",
        plain="def flatten(nested):",
        doc="The leaves of arbitrarily nested lists, left to right.",
        body=(
            "    leaves: list[Any] = []\n"
            "    stack = [iter(nested)]\n"
            "    while stack:\n"
            "        for item in stack[-1]:\n"
            "            if isinstance(item, list):\n"
            "                stack.append(iter(item))\n"
            "                break\n"
            "            leaves.append(item)\n"
            "        else:\n"
            "            stack.pop()\n"
            "    return leaves\n"
        ),
        tests=(
            "assert flatten([1, [2, [3, []], 4], 5]) == [1, 2, 3, 4, 5]",
            "assert flatten([]) == []",
        ),
        summary="walks an explicit stack of iterators, so deep nesting cannot hit the recursion "
        "limit",
        complexity="O(total items)",
        flaw=("                break\n", ""),
    ),
)

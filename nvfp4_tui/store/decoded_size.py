"""How much memory a Parquet file would take once read, told before it is read.

A table as the writer writes it decodes to 5 to 20 times its file's size (the demo's snapshot:
5.4 to 16.6). A file made to blow up does far more: a dictionary of one long text repeated by
run-length encoding made an 11 kB ``requests.parquet`` 1.6 GB in memory, and an export of it ran
for minutes. A file that would decode past ``DECODED_MAX_RATIO`` times its size, and past
``DECODED_FLOOR_BYTES`` (a long idle recording compresses very well, and is no bomb), is refused.

The estimate counts 8 bytes per row of each fixed-width column (from the row count in the
file's footer, read alone) and the bytes of each text column, summed in a streaming pass that
holds one batch of rows at a time. Not caught: a single text value that decompresses huge by
itself (a page is decompressed whole), which costs that value's size, once.
"""

from __future__ import annotations

from typing import IO

import polars as pl

DECODED_MAX_RATIO = 1000
DECODED_FLOOR_BYTES = 256 << 20
_FIXED_WIDTH_BYTES = 8


def decoded_problem(file: IO[bytes], size: int) -> str | None:
    """Why the Parquet ``file`` (``size`` bytes on disk) is not to be read whole, or None.

    Leaves ``file`` at its start. A file that is no Parquet raises what polars raises.
    """
    limit = max(DECODED_FLOOR_BYTES, DECODED_MAX_RATIO * size)
    try:
        scan = pl.scan_parquet(file)
        schema = scan.collect_schema()
        texts = [name for name, dtype in schema.items() if dtype == pl.String]
        rows = int(scan.select(pl.len()).collect().item())
        decoded = rows * _FIXED_WIDTH_BYTES * (len(schema) - len(texts))
        if decoded <= limit and texts:
            lengths = pl.col(texts).str.len_bytes().cast(pl.UInt64).sum()
            sums = scan.select(lengths).collect(engine="streaming").row(0)
            decoded += sum(int(value or 0) for value in sums)
    finally:
        file.seek(0)
    if decoded <= limit:
        return None
    return (
        f"would take {decoded:,} bytes in memory from {size:,} on disk, over "
        f"{DECODED_MAX_RATIO}× its size: not read (a file made to blow up when decoded?)"
    )

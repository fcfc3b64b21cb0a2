"""`vllm bench serve`, for the vLLM CPU build whose `vllm` console script fails (it looks up the
metadata of a distribution named `vllm`): its own parser and main, run by vLLM's interpreter.

Run by ``real_server.py`` as ``<vllm venv>/bin/python vllm_bench_serve.py ARGS`` with the
arguments `vllm bench serve` takes; imports nothing of nvfp4-tui.
"""

import sys

from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

if __name__ == "__main__":
    parser = FlexibleArgumentParser(prog="vllm bench serve")
    add_cli_args(parser)
    main(parser.parse_args(sys.argv[1:]))

"""A simulated vLLM fleet: OpenAI-compatible aiohttp servers and simulated GPUs."""

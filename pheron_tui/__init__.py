"""pheron-tui: a full-screen terminal agent for local language models."""

__version__ = "0.1.0"

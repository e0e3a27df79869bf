"""Default limits, one place each: the config file, the CLI help and the core agree."""

DEFAULT_MAX_STEPS = 12
"""Planning cycles before a task gives up."""
DEFAULT_SHELL_TIMEOUT_S = 60.0
"""Seconds before a shell command is killed (the user's value is a ceiling for the model's)."""
DEFAULT_OUTPUT_CAP_CHARS = 16_000
"""What the model sees of one call's output at most (head and tail kept)."""
SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"}
)
"""Folders no walk of the workspace goes into (searches, the @ picker, finding a named file):
version control internals, installed packages, caches."""

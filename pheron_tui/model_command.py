"""``pheron-tui models pull|list``."""

from __future__ import annotations

import sys
import time

from pheron_tui.providers.models import (
    BUNDLED,
    BUNDLED_NAME,
    BUNDLED_SHA256,
    ModelError,
    bundled_gguf,
    cache_root,
    imported_folder,
)


def _progress(fraction: float | None, message: str) -> None:
    shown = f"{fraction:4.0%}" if fraction is not None else "  … "
    print(f"[{shown}] {message}", file=sys.stderr, flush=True)


def run_models_command(action: str) -> int:
    if action == "list":
        root = cache_root()
        found = sorted(root.glob("*.gguf")) + sorted((root / "imported").glob("*"))
        if not found:
            print(f"no models in {root}; run: pheron-tui models pull")
        for path in found:
            print(path)
        return 0
    started = time.monotonic()
    try:
        gguf = bundled_gguf(_progress)
        folder = imported_folder(gguf, _progress, digest=BUNDLED_SHA256)
    except (ModelError, ValueError) as exc:
        print(f"pheron-tui: {exc}", file=sys.stderr)
        return 1
    _progress(1.0, f"{BUNDLED_NAME} ready in {time.monotonic() - started:.1f} s: {folder}")
    print(f"--model {BUNDLED} → {folder}")
    return 0

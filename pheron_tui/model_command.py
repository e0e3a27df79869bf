"""``pheron-tui models pull [NAME]`` and ``pheron-tui models list``."""

from __future__ import annotations

import sys
import time

from pheron_tui.providers.catalogue import CATALOGUE, DEFAULT_MODEL, cache_root, cached
from pheron_tui.providers.models import (
    Engine,
    ModelError,
    catalogue_entry,
    gguf_file,
    imported_folder,
)


def _progress(fraction: float | None, message: str) -> None:
    shown = f"{fraction:4.0%}" if fraction is not None else "  … "
    print(f"[{shown}] {message}", file=sys.stderr, flush=True)


def run_models_command(action: str, name: str = "default", provider: str = "auto") -> int:
    if action == "list":
        print(f"catalogue (cache: {cache_root()}):")
        for entry in CATALOGUE.values():
            default = "  (default)" if entry.name == DEFAULT_MODEL else ""
            state = "pulled" if cached(entry) else f"{entry.size / 1e6:,.0f} MB to pull"
            print(f"  {entry.name:<20} {entry.title}, {entry.licence}: {state}{default}")
        return 0
    engine: Engine = "mlx" if provider == "mlx" else "llamacpp"
    found = catalogue_entry(name, engine)
    if found is None:
        known = ", ".join(CATALOGUE)
        print(f"pheron-tui: no model {name!r} in the catalogue ({known})", file=sys.stderr)
        return 2
    entry = found
    started = time.monotonic()
    try:
        first = cached(entry) is None
        path = gguf_file(entry.name, engine, _progress)
        if engine == "mlx":
            path = imported_folder(path, _progress, digest=entry.sha256)
    except (ModelError, ValueError) as exc:
        print(f"pheron-tui: {exc}", file=sys.stderr)
        return 1
    if first:
        print(f"{entry.title} is distributed under the {entry.licence} licence.", file=sys.stderr)
    _progress(1.0, f"{entry.title} ready in {time.monotonic() - started:.1f} s: {path}")
    print(f"--model {entry.name} → {path}")
    return 0

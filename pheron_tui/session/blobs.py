"""A content-addressed store for checkpointed files: each file's bytes once, by sha256.

It lives in the app's state folder, outside every workspace (tools cannot reach it).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from pheron_tui.config import APP_NAME


def checkpoints_dir() -> Path:
    return Path(platformdirs.user_state_dir(APP_NAME)) / "checkpoints"


class BlobStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or checkpoints_dir()

    def _path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_bytes(data)
            os.replace(temporary, path)
        return digest

    def get(self, digest: str) -> bytes:
        """The bytes saved under ``digest``; KeyError when they are gone or were changed."""
        try:
            data = self._path(digest).read_bytes()
        except OSError:
            raise KeyError(digest) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise KeyError(digest)
        return data

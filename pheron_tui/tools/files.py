"""Files inside the workspace: which paths may be used, and opening them without races.

A path a model names is resolved (symlinks followed) and must land inside the workspace and
outside the protected places (pheron-tui's own config, data and cache, and secret folders such
as ``~/.ssh``), wherever those lie. Resolving is only a check, though: between the check and
the use another process could swap a folder or the file for a link to somewhere else. So files
are then opened from the workspace root one component at a time, never following a link
(``openat`` with ``O_NOFOLLOW``): a path that changed under us fails instead of escaping.

Writes are atomic: a temporary file in the same folder, fsynced, then renamed over the old
one with the old mode kept. A failure or a kill mid-write leaves the old file whole, readers
never see half a file, and a file with other hard links is refused (its other names, perhaps
outside the workspace, would silently keep or lose the change).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from pheron_tui.core.errors import PheronError
from pheron_tui.core.safety import shorten

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(PheronError, ValueError):
    """A path that leaves the workspace or cannot be used; the message is for the model."""


def resolve_path(workspace: Path, raw: str, protected: Sequence[Path] = ()) -> Path:
    """Resolve ``raw`` against the workspace, refusing anything that ends up outside it or in a
    protected place."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused("the path is empty")
    if "\x00" in raw:
        raise PathRefused("the path contains a NUL byte")
    root = workspace.resolve()
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops, names too long
        raise PathRefused(f"the path {shorten(raw)!r} cannot be resolved: {exc}") from None
    if resolved != root and not resolved.is_relative_to(root):
        raise PathRefused(
            f"the path {shorten(raw)!r} is outside the workspace {str(root)!r}; "
            "only paths inside the workspace can be used"
        )
    for place in protected:
        if resolved == place or resolved.is_relative_to(place):
            raise PathRefused(
                f"the path {shorten(raw)!r} is in {str(place)!r}, which holds pheron-tui's own "
                "settings or the user's secrets; tools may not use it"
            )
    return resolved


def resolve_entry(workspace: Path, raw: str, protected: Sequence[Path] = ()) -> Path:
    """The entry ``raw`` names, itself: a link stays the link (deleting or moving it must not
    touch what it points to). Both the link and where it leads must pass ``resolve_path``."""
    resolved = resolve_path(workspace, raw, protected)
    given = Path(raw)
    if given.name in ("", ".", ".."):
        return resolved
    entry = resolve_path(workspace, str(given.parent), protected) / given.name
    for place in protected:
        if entry == place or entry.is_relative_to(place):
            raise PathRefused(
                f"the path {shorten(raw)!r} is in {str(place)!r}; tools may not use it"
            )
    return entry


def display_path(workspace: Path, path: Path) -> str:
    """A path as the model should see it: relative to the workspace."""
    try:
        relative = path.relative_to(workspace.resolve())
    except ValueError:
        return shorten(str(path))
    return shorten(str(relative)) or "."


def _parts(workspace: Path, path: Path) -> tuple[Path, tuple[str, ...]]:
    root = workspace.resolve()
    return root, path.relative_to(root).parts


@contextlib.contextmanager
def _folder_fd(workspace: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """A descriptor of the folder ``parts`` below the workspace root, walked without following
    links; missing folders are made when ``create``."""
    root = workspace.resolve()
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        yield fd
    except OSError as exc:
        raise _swapped(exc, root.joinpath(*parts)) from None
    finally:
        os.close(fd)


def _swapped(exc: OSError, where: Path) -> Exception:
    """A link where a checked path had none means it changed between the check and the use."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return PathRefused(f"{where.name or where} changed into a link while it was being opened")
    return exc


def read_bytes(workspace: Path, path: Path, limit: int) -> tuple[bytes, int]:
    """Up to ``limit`` bytes of a regular file and its whole size, opened without following
    links. Raises PathRefused for what is not a regular file."""
    _root, parts = _parts(workspace, path)
    if not parts:
        raise PathRefused("the workspace itself is a directory; use list_dir")
    with _folder_fd(workspace, parts[:-1]) as folder:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=folder)  # fmt: skip
        except OSError as exc:
            raise _swapped(exc, path) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise PathRefused(f"{path.name} is a directory; use list_dir")
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"{path.name} is not a regular file (device, socket or pipe)")
        return handle.read(limit), info.st_size


def list_folder(workspace: Path, path: Path) -> list[os.DirEntry[str]]:
    """The entries of a workspace folder, opened without following links."""
    _root, parts = _parts(workspace, path)
    with _folder_fd(workspace, parts) as folder, os.scandir(folder) as entries:
        return list(entries)


def write_atomic(workspace: Path, path: Path, data: bytes) -> None:
    """Replace (or create) a workspace file with ``data`` all at once, keeping its mode."""
    _root, parts = _parts(workspace, path)
    if not parts:
        raise PathRefused("the workspace itself cannot be written as a file")
    name = parts[-1]
    with _folder_fd(workspace, parts[:-1], create=True) as folder:
        try:
            old = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None:
            if not stat.S_ISREG(old.st_mode):
                raise PathRefused(f"{name} exists and is not a regular file")
            if old.st_nlink > 1:
                raise PathRefused(
                    f"{name} has {old.st_nlink} hard links; writing it would change the file "
                    "under its other names too, so it is refused"
                )
        mode = None if old is None else stat.S_IMODE(old.st_mode)
        temporary = _temporary_file(folder, name, data, mode)
        try:
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
        with contextlib.suppress(OSError):
            os.fsync(folder)  # the rename itself survives a crash


def _temporary_file(folder: int, name: str, data: bytes, mode: int | None = None) -> str:
    """A new hidden file beside ``name`` in ``folder`` holding ``data`` on disk; its name."""
    temporary = f".{name[:100]}.{secrets.token_hex(4)}.pheron-tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666, dir_fd=folder)  # fmt: skip
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    return temporary


def write_new(workspace: Path, path: Path, data: bytes) -> None:
    """Create a workspace file holding ``data``, all at once; never over an existing entry
    (the file appears by a hard link, which fails when the name is taken)."""
    _root, parts = _parts(workspace, path)
    if not parts:
        raise PathRefused("the workspace itself cannot be written as a file")
    name = parts[-1]
    with _folder_fd(workspace, parts[:-1], create=True) as folder:
        temporary = _temporary_file(folder, name, data)
        try:
            try:
                os.link(temporary, name, src_dir_fd=folder, dst_dir_fd=folder,
                        follow_symlinks=False)  # fmt: skip
            except FileExistsError:
                raise PathRefused(f"{name} already exists; it is not replaced") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)


def make_folder(workspace: Path, path: Path) -> bool:
    """Create a workspace folder and any missing parents; False when it was there already."""
    _root, parts = _parts(workspace, path)
    if not parts:
        return False
    with _folder_fd(workspace, parts[:-1], create=True) as folder:
        try:
            info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            os.mkdir(parts[-1], 0o777, dir_fd=folder)
            return True
    if not stat.S_ISDIR(info.st_mode):
        raise PathRefused(f"{path.name} exists and is not a folder")
    return False


def move_entry(workspace: Path, source: Path, destination: Path) -> None:
    """Rename a workspace file or folder; never over an existing entry. A link is moved as a
    link (never followed); missing destination folders are made."""
    _root, src = _parts(workspace, source)
    _root, dst = _parts(workspace, destination)
    if not src or not dst:
        raise PathRefused("the workspace itself cannot be moved or replaced")
    if dst[: len(src)] == src:
        raise PathRefused("a folder cannot be moved into itself")
    with (
        _folder_fd(workspace, src[:-1]) as src_folder,
        _folder_fd(workspace, dst[:-1], create=True) as dst_folder,
    ):
        os.stat(src[-1], dir_fd=src_folder, follow_symlinks=False)  # FileNotFoundError
        try:
            os.stat(dst[-1], dir_fd=dst_folder, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            raise PathRefused(f"{destination.name} already exists; it is not replaced")
        os.rename(src[-1], dst[-1], src_dir_fd=src_folder, dst_dir_fd=dst_folder)


SHOWN_ENTRIES = 10


def _not_empty(workspace: Path, parts: Sequence[str]) -> str:
    """Why a folder is not deleted, with what it holds: told only "delete those first", the
    1.5B model guessed at the names inside."""
    folder = "/".join(parts)
    with _folder_fd(workspace, parts) as fd:
        names = sorted(os.listdir(fd))
    shown = ", ".join(f"{folder}/{name}" for name in names[:SHOWN_ENTRIES])
    more = f" and {len(names) - SHOWN_ENTRIES} more" if len(names) > SHOWN_ENTRIES else ""
    # Told "delete those first, or the folder with everything in it with recursive", the
    # 1.5B model, asked to remove the build folder, deleted one of its two files with
    # "recursive": true and said the folder was empty: the call that does it is spelled out.
    call = json.dumps({"path": folder, "recursive": True})
    return (
        f"{folder} is a folder with {len(names)} {'entry' if len(names) == 1 else 'entries'} "
        f"in it ({shown}{more}). To delete the folder and everything in it, call delete_path "
        f"with {call}; to keep the folder, delete only the entries meant, one call each"
    )


def delete_tree(workspace: Path, path: Path) -> int:
    """Remove a workspace folder and everything in it (links removed, never followed), or one
    entry; return how many entries went, the folder itself not counted."""
    removed = 0
    if path.is_dir() and not path.is_symlink():
        for entry in list_folder(workspace, path):
            removed += 1 + delete_tree(workspace, path / entry.name)
    delete_entry(workspace, path)
    return removed


def delete_entry(workspace: Path, path: Path) -> str:
    """Remove a workspace file, link (not what it points to) or empty folder; return what it
    was. A folder with something in it is refused: one call removes one thing."""
    _root, parts = _parts(workspace, path)
    if not parts:
        raise PathRefused("the workspace itself cannot be deleted")
    with _folder_fd(workspace, parts[:-1]) as folder:
        info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            try:
                os.rmdir(parts[-1], dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise PathRefused(_not_empty(workspace, parts)) from None
                raise
            return "folder"
        os.unlink(parts[-1], dir_fd=folder)
        return "link" if stat.S_ISLNK(info.st_mode) else "file"

"""Slash-command parsing, @ mentions and checkpoints, without the UI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pheron_tui.core import events as ev
from pheron_tui.runtime.mentions import ATTACH_CHARS, attach_mentions, workspace_files
from pheron_tui.session.blobs import BlobStore
from pheron_tui.tools.checkpoint import restore, snapshot
from pheron_tui.ui.slash import COMMANDS, SlashError, completions, is_command, parse


def test_every_command_parses_and_unknown_words_are_errors() -> None:
    for command in COMMANDS:
        text = command.usage.replace("NAME", "qwen").replace("[FILE]", "")
        assert parse(text)[0] is command
    assert parse("/model  qwen2.5-coder-1.5b ") == (parse("/model x")[0], "qwen2.5-coder-1.5b")
    with pytest.raises(SlashError, match=r"Unknown command /rewnd\. Did you mean /rewind\?"):
        parse("/rewnd")
    with pytest.raises(SlashError, match="needs NAME"):
        parse("/model")
    with pytest.raises(SlashError, match="takes nothing"):
        parse("/new now")
    assert not is_command("//tmp is a folder") and is_command("/help")


def test_completions_follow_what_is_typed() -> None:
    assert [c.name for c in completions("/")] == [c.name for c in COMMANDS]
    assert [c.name for c in completions("/co")] == ["compact", "context"]
    assert completions("/model qwen") == [] and completions("hello /he") == []


def test_the_picker_lists_what_gitignore_leaves(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n")
    (tmp_path / "app.py").write_text("x")
    (tmp_path / "debug.log").write_text("x")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.js").write_text("x")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".gitignore").write_text("secret.txt\n")
    (tmp_path / "src" / "secret.txt").write_text("x")
    (tmp_path / "src" / "main.py").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("x")
    assert workspace_files(tmp_path) == [".gitignore", "app.py", "src/.gitignore", "src/main.py"]


def test_mentions_attach_workspace_files_capped_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text("print(1)\n")
    (tmp_path / "big.txt").write_text("y" * (ATTACH_CHARS + 5000))
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" * 100)
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("secret")
    attached = attach_mentions(
        "see @small.py, @big.txt and @blob.bin; @property and a@b.com and @../outside.txt",
        tmp_path,
    )
    paths = [path for path, _ in attached.files]
    assert paths == ["small.py", "big.txt"]
    assert len(attached.files[1][1]) == ATTACH_CHARS
    assert any("first 20,000 characters attached" in n for n in attached.notes)
    assert any("blob.bin is a binary file; not attached" in n for n in attached.notes)
    assert not any("secret" in text for _, text in attached.files)


def test_restore_puts_back_files_folders_and_removes_what_was_new(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_text("old a")
    (ws / "keep.txt").write_text("keep")
    os.chmod(ws / "keep.txt", 0o640)
    store = BlobStore(tmp_path / "blobs")
    saved, complete = snapshot(ws, (), ["pkg", "new/deep.txt", "keep.txt"], store.put)
    assert complete
    assert {(s.path, s.kind) for s in saved} == {
        ("pkg", "folder"), ("pkg/a.py", "file"), ("new/deep.txt", "missing"), ("keep.txt", "file")
    }  # fmt: skip
    # What tools then did: moved the folder away, wrote a new file, changed another.
    (ws / "pkg").rename(ws / "moved")
    (ws / "new").mkdir()
    (ws / "new" / "deep.txt").write_text("new")
    (ws / "keep.txt").write_text("changed")
    report = restore(ws, (), {s.path: s for s in saved}, store.get)
    assert (ws / "pkg" / "a.py").read_text() == "old a"
    assert (ws / "keep.txt").read_text() == "keep"
    assert not (ws / "new" / "deep.txt").exists()
    assert report.failed == [] and "new/deep.txt" in report.removed
    assert (ws / "moved").exists()  # not the checkpoint's to remove: it named only pkg


def test_a_link_is_left_alone_and_the_checkpoint_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to("/etc/hostname")
    saved, complete = snapshot(ws, (), ["link"], BlobStore(tmp_path / "b").put)
    assert saved == [] and not complete


def test_a_changed_blob_is_not_restored(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "b")
    digest = store.put(b"original")
    (store.folder / digest[:2] / digest).write_bytes(b"tampered")
    with pytest.raises(KeyError):
        store.get(digest)
    ws = tmp_path / "ws"
    ws.mkdir()
    state = ev.SavedFile(path="f.txt", kind="file", blob=digest)
    report = restore(ws, (), {"f.txt": state}, store.get)
    assert report.failed and not (ws / "f.txt").exists()

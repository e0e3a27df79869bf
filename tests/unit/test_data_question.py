"""A question that counts or compares over a data file is worked out with Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pheron_tui.core.data_question import data_question_hint


@pytest.fixture
def data(tmp_path: Path) -> Path:
    books = [
        {"title": "Dune", "year": 1965},
        {"title": "The Hobbit", "year": 1937, "author": "Tolkien"},
    ]
    (tmp_path / "books.json").write_text(json.dumps(books))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "visits.csv").write_text("date,visitors\n2026-03-01,41\n2026-03-02,58\n")
    (tmp_path / "scores.tsv").write_text("name\tscore\nana\t3\nbo\t5\n")
    (tmp_path / "settings.json").write_text('{"debug": false, "port": 8080}')
    return tmp_path


def test_a_count_over_json_records_names_their_keys_and_how_to_load_them(data: Path) -> None:
    hint = data_question_hint("How many books in books.json came out before 1950?", data)
    assert "a list of 2 records, each with the keys 'title', 'year', 'author'" in hint
    assert "json.load(open('books.json'))" in hint


def test_a_comparison_over_csv_rows_names_the_header_and_says_values_are_text(data: Path) -> None:
    # Named by its name only: found below the root, loaded by its path.
    hint = data_question_hint("On which date did visits.csv record the most visitors?", data)
    assert "data/visits.csv has 2 rows under the header 'date', 'visitors'" in hint
    assert "`rows` holds those 2 and not the header" in hint  # the 1.5B model took one off
    assert "csv.DictReader(open('data/visits.csv'))" in hint
    assert "int() or float()" in hint
    assert "delimiter='\\t'" in data_question_hint("What is the highest score in scores.tsv?", data)


def test_the_line_the_hint_shows_runs_once_its_dots_are_filled(data: Path) -> None:
    hint = data_question_hint("What is the total of visitors in data/visits.csv?", data)
    program = hint.split('python3 -c "')[1].split('"')[0]
    program = program.replace("...", "sum(int(r['visitors']) for r in rows)")
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=data, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "99"


@pytest.mark.parametrize(
    "text",
    [
        "What is in books.json?",  # nothing to count or compare
        "How many files are there?",  # no data file named
        "How many books are in nowhere.json?",
        "What is the highest value in notes.md?",  # not a data file
    ],
)
def test_no_hint_for_other_questions(data: Path, text: str) -> None:
    (data / "notes.md").write_text("a\n")
    assert data_question_hint(text, data) == ""


def test_a_file_that_does_not_parse_or_is_linked_out_gets_no_hint(
    data: Path, tmp_path_factory
) -> None:
    (data / "broken.json").write_text("{not json")
    assert data_question_hint("How many items in broken.json?", data) == ""
    outside = tmp_path_factory.mktemp("outside") / "secret.csv"
    outside.write_text("a,b\n1,2\n")
    (data / "linked.csv").symlink_to(outside)
    assert data_question_hint("What is the largest a in linked.csv?", data) == ""


def test_records_under_a_key_are_named_and_a_settings_object_is_not_counted(data: Path) -> None:
    (data / "shop.json").write_text('{"name": "shop", "items": [{"sku": 1, "price": 2}]}')
    hint = data_question_hint("What is the cheapest item in shop.json?", data)
    assert "an object whose 'items' is a list of 1 record, with the keys 'sku', 'price'" in hint
    assert data_question_hint("What is the largest number in settings.json?", data) == ""


def test_a_folder_of_json_objects_named_by_a_word_is_counted_over(tmp_path: Path) -> None:
    """Asked "Which recipe serves the most people?" beside recipes/, the 1.5B model listed
    the folder and answered "There are 3 recipes"."""
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    for name, serves in [("pancakes", 4), ("soup", 6), ("toast", 1)]:
        (recipes / f"{name}.json").write_text(json.dumps({"name": name, "serves": serves}))
    hint = data_question_hint("Which recipe serves the most people?", tmp_path)
    assert "recipes holds 3 JSON files, each an object with the keys 'name', 'serves'" in hint
    program = hint.split('python3 -c "')[1].split('"')[0]
    program = program.replace("...", "max(records, key=lambda r: r['serves'])['name']")
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "soup"
    # One file, or a file that is no object: not records.
    (recipes / "notes.json").write_text("[1, 2]")
    assert data_question_hint("Which recipe serves the most people?", tmp_path) == ""

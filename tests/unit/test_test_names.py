"""A failing test named by less than its name is sent back once (``core/test_names``)."""

from __future__ import annotations

from pheron_tui.core.test_names import asks_which_test, shortened_test

TRACEBACK = (
    "exit code 1\nTraceback (most recent call last):\n"
    '  File "/w/test_calc.py", line 14, in <module>\n    test_average()\n'
    '  File "/w/test_calc.py", line 9, in test_average\n'
    "    assert average([2, 4, 6]) == 4\nAssertionError\n"
)
ASKED = "Run python3 test_calc.py and tell me which test fails."


def test_a_test_named_without_its_prefix_is_found() -> None:
    for answer in ("Test average failed", "Test 'average' in file 'test_calc.py' failed."):
        assert shortened_test(ASKED, answer, [TRACEBACK]) == ("average", "test_average")


def test_a_test_named_in_full_or_not_at_all_is_not() -> None:
    for answer in (
        "test_average fails: average returns 6.0, not 4",  # in full, the function too
        "The test of the mean fails.",  # no shortened name: nothing to say
        "calc.py fails",  # a module's name is no test's
        "average([2, 4, 6]) returns 6.0",  # a call, not a test's name
    ):
        assert shortened_test(ASKED, answer, [TRACEBACK]) is None, answer


def test_only_a_question_about_which_test_fails_is_judged() -> None:
    """Asked whether average has a bug, "average" in the answer names the function."""
    assert not asks_which_test("Is there a bug in the average function in calc.py?")
    assert shortened_test("Is average right?", "average is wrong", [TRACEBACK]) is None
    for asked in (
        "Run the tests and name the failure",
        "What test is failing?",
        "Which tests fail?",
        "run pytest; tell me what tests are broken",
    ):
        assert asks_which_test(asked), asked


def test_names_of_other_runners_are_read() -> None:
    pytest_run = "FAILED tests/test_shop.py::test_total - assert 0 == 1\n"
    unittest_run = "FAIL: test_total (test_shop.TestShop.test_total)\n"
    suffixed = "ERROR in parse_test: ValueError\n"
    asked = "Run the tests and name the failure"
    assert shortened_test(asked, "The total test fails.", [pytest_run]) == ("total", "test_total")
    assert shortened_test(asked, "total fails", [unittest_run]) == ("total", "test_total")
    assert shortened_test(asked, "parse fails", [suffixed]) == ("parse", "parse_test")

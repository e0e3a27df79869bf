"""PheronError: the root of every error pheron-tui reports to a user.

Each carries a message written for the reader it goes to (the user, or the model for tool
calls), so a caller may show ``str(error)`` as it is. Catching ``PheronError`` catches what
we expect to go wrong; anything else is a bug of ours.
"""


class PheronError(Exception):
    """An expected failure with a message fit to show."""

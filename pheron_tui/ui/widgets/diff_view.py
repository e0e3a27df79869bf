"""A unified diff, coloured line by line: never parsed as markup, control characters shown."""

from __future__ import annotations

from textual.content import Content

from pheron_tui.core.safety import printable

LINE_STYLES = (
    ("+++", "bold"),
    ("---", "bold"),
    ("@@", "$accent"),
    ("+", "$text-success on $success-muted"),
    ("-", "$text-error on $error-muted"),
    ("\\", "$text-muted italic"),
)


def diff_content(diff: str) -> Content:
    lines = []
    for line in diff.rstrip("\n").split("\n"):
        style = next((style for prefix, style in LINE_STYLES if line.startswith(prefix)), "")
        text = printable(line)
        lines.append(Content.styled(text, style) if style else Content(text))
    return Content("\n").join(lines)

"""Data on a page is text, never markup that runs: the one place where strings from
data (turn contents, ids, model answers, job errors, table names) and from URL
parameters become Markdown.

- `escape_markdown(s)`: `s` shown literally in any Markdown context (st.markdown,
  st.warning, st.caption, labels): every ASCII punctuation character becomes a
  character reference (`&#33;`), so no image, link, emphasis, heading, HTML, LaTeX or
  Streamlit directive (`:red[...]`) forms from it; a word joiner (U+2060) inside
  `http://` and `www.` keeps bare URLs from autolinking. E-mail addresses are left
  whole (they are people's names here, read and copied as they are; a `mailto:` link
  fetches nothing).
- `code_span(s)`: `s` as inline code, with a fence of backticks longer than any run
  inside it, so the data cannot close the span and continue as Markdown.
- `neutralize_images(md)`: Markdown from data that is meant to be drawn as Markdown (a
  chat turn) keeps its formatting and links (a link needs a click), but an image
  becomes its text and a link: `![alt](url)` reads as `!` + `[alt](url)`, so nothing is
  fetched on view. Code blocks and code spans are left as they are. The result is then
  parsed as CommonMark (markdown-it-py, tables on); where the guess at code misread the
  text (a backslash before a backtick, a span across a blank line, a fence whose info
  string holds a backtick), every `![` is escaped, code too, and as a last resort the
  whole text is shown literally. An image is never left to a guess.

The Content-Security-Policy of `http_guard.py` is the second wall: whatever slips
through, the browser loads images only from the app itself.
"""

from __future__ import annotations

import re
import string
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PUNCTUATION = frozenset(string.punctuation)
# Fenced code blocks (closed, or running to the end like CommonMark) and code spans.
_CODE = re.compile(
    r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n(?:.*?\n)??[ ]{0,3}(?P=fence)[`~]*[ \t]*$"
    r"|^[ ]{0,3}(?P<open>`{3,}|~{3,})[^\n]*\n.*\Z"
    r"|(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`)",
    re.DOTALL | re.MULTILINE,
)
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?=://)|(?<=www)(?=\.)", re.IGNORECASE)
# `![` not already escaped (an odd number of backslashes before `!` escapes it).
_IMAGE_OPENER = re.compile(r"(?<!\\)((?:\\\\)*)!\[")


def escape_markdown(text: object) -> str:
    # GFM's autolinks are found in the parsed text, after escapes and character
    # references are decoded: an invisible word joiner inside `http://` and `www.` is
    # the only thing that keeps a bare URL from linking.
    unlinked = _AUTOLINK.sub(WORD_JOINER, str(text))
    return "".join(f"&#{ord(ch)};" if ch in _PUNCTUATION else ch for ch in unlinked)


def code_span(text: object) -> str:
    body = str(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def neutralize_images(markdown: str) -> str:
    if "![" not in markdown:  # an image needs `!` next to `[` on one line
        return markdown
    kept_code = _neutralize_outside_code(markdown)
    if not _draws_image(kept_code):
        return kept_code
    everywhere = _IMAGE_OPENER.sub(r"\1\\![", markdown)
    return everywhere if not _draws_image(everywhere) else escape_markdown(markdown)


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def _draws_image(markdown: str) -> bool:
    def has_image(tokens: list[Token]) -> bool:
        return any(t.type == "image" or has_image(t.children or []) for t in tokens)

    return has_image(_parser().parse(markdown))


def _neutralize_outside_code(markdown: str) -> str:
    out, at = [], 0
    for match in _CODE.finditer(markdown):
        out.append(_IMAGE_OPENER.sub(r"\1\\![", markdown[at : match.start()]))
        out.append(match.group(0))
        at = match.end()
    out.append(_IMAGE_OPENER.sub(r"\1\\![", markdown[at:]))
    return "".join(out)

"""User and library text shown through a Markdown element as itself (DESIGN §10): quoted and
cut short in a message (:func:`quote`), every Markdown, HTML and LaTeX character escaped and no
URL autolinked (:func:`plain`).  Notices, trace names, worker names and library refusals all go
through here, so nothing a URL or an upload carries is ever a link, an image or a formula."""

from __future__ import annotations

import re
from typing import Any

from .rerun_caps import NOTICE_MAX_CHARS, QUOTE_MAX_CHARS

__all__ = ["quote", "plain", "JOINER"]


def quote(text: Any, limit: int = QUOTE_MAX_CHARS) -> str:
    """User text for a message: quoted, one line, at most ``limit`` characters (then "…").

    Messages are shown as plain text (see :func:`plain`), so nothing in it is ever a link."""
    s = " ".join(str(text).split())
    return repr(s if len(s) <= limit else s[:limit] + "…")


#: characters with a meaning in Streamlit's Markdown (CommonMark, GFM autolinks, LaTeX, HTML)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:/&@])")
#: where a GFM autolink literal would start (remark-gfm links ``http://``, ``https://``, ``www.``
#: and ``user@host.tld`` in the text *after* escapes are resolved, so escaping cannot stop it):
#: between a colon and a slash, between ``www`` and its dot, after every ``@``
_AUTOLINK = re.compile(r"(?<=:)(?=/)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
#: U+2060 WORD JOINER: invisible, not a space, punctuation or word character, so none of those
#: patterns matches across it (and copied text keeps it: not a URL either)
JOINER = "\u2060"


def plain(text: str, limit: int = NOTICE_MAX_CHARS) -> str:
    """Text to show through a Markdown element as itself, at most ``limit`` characters (cut with
    "…"; the invisible joiners and escapes below not counted): every Markdown,
    HTML and LaTeX character backslash-escaped (so no link, image, tag or formula), and a
    :data:`JOINER` inside every ``://``, ``www.`` and after every ``@`` (so no bare URL, host or
    e-mail address is autolinked)."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit - 1] + "…"  # at most ``limit`` characters, the ellipsis included
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub(JOINER, s))

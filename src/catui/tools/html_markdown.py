"""A small HTML → Markdown converter (headings, links, lists, code, emphasis, paragraphs) on html.parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "canvas"})
BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "table",
        "tr",
        "form",
        "figure",
        "figcaption",
        "blockquote",
        "dl",
        "dt",
        "dd",
        "details",
        "summary",
    }
)
# Bold and italic open and close with the same Markdown mark.
EMPHASIS_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*"}
VOID_TAGS = frozenset(
    {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"}
)


class _Converter(HTMLParser):
    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.lists: list[list[int]] = []  # one [counter] per open list; counter -1 = bulleted
        self.link_href: list[str | None] = []
        self.title: str | None = None
        self._in_title = False

    # ---- helpers
    def _block_break(self) -> None:
        self.out.append("\n\n")

    def _line_break(self) -> None:
        self.out.append("\n")

    # ---- parser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_TAGS:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        attr = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag):
            self._block_break()
            self.out.append("#" * int(tag[1]) + " ")
        elif tag in BLOCK_TAGS:
            self._block_break()
            if tag == "blockquote":
                self.out.append("> ")
        elif tag in ("ul", "ol"):
            self.lists.append([1 if tag == "ol" else -1])
            self._line_break()
        elif tag == "li":
            self._line_break()
            indent = "  " * max(len(self.lists) - 1, 0)
            if self.lists and self.lists[-1][0] > 0:
                self.out.append(f"{indent}{self.lists[-1][0]}. ")
                self.lists[-1][0] += 1
            else:
                self.out.append(f"{indent}- ")
        elif tag == "pre":
            self.pre_depth += 1
            self._block_break()
            self.out.append("```\n")
        elif tag == "code" and not self.pre_depth:
            self.out.append("`")
        elif tag in EMPHASIS_MARKS:
            self.out.append(EMPHASIS_MARKS[tag])
        elif tag == "a":
            href = attr.get("href")
            if href and self.base_url:
                href = urljoin(self.base_url, href)
            self.link_href.append(href)
            self.out.append("[")
        elif tag == "br":
            self._line_break()
        elif tag == "hr":
            self._block_break()
            self.out.append("---")
            self._block_break()
        elif tag == "img":
            alt = attr.get("alt") or ""
            if alt:
                self.out.append(f"![{alt}]")
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in SKIPPED_TAGS:
            self.skip_depth = max(self.skip_depth - 1, 0)
            return
        if self.skip_depth:
            return
        if re.fullmatch(r"h[1-6]", tag) or tag in BLOCK_TAGS:
            self._block_break()
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._block_break()
        elif tag == "pre":
            self.pre_depth = max(self.pre_depth - 1, 0)
            if self.out and not self.out[-1].endswith("\n"):
                self.out.append("\n")
            self.out.append("```")
            self._block_break()
        elif tag == "code" and not self.pre_depth:
            self.out.append("`")
        elif tag in EMPHASIS_MARKS:
            self.out.append(EMPHASIS_MARKS[tag])
        elif tag == "a":
            href = self.link_href.pop() if self.link_href else None
            self.out.append(f"]({href})" if href else "]")

    def handle_data(self, data: str) -> None:
        if self._in_title and self.title is None:
            self.title = data.strip()
        if self.skip_depth:
            return
        if self.pre_depth:
            self.out.append(data)
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    """Convert an HTML document to readable Markdown; scripts, styles and the head are dropped."""
    converter = _Converter(base_url)
    converter.feed(html)
    converter.close()
    text = "".join(converter.out)
    # Tidy: no trailing spaces, no runs of blank lines, no spaces at the start of ordinary lines.
    lines: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            in_code = not in_code
            lines.append(line.strip())
            continue
        if in_code:
            lines.append(line.rstrip())
            continue
        stripped = line.rstrip()
        if not re.match(r"\s*(?:[-*]|\d+\.) ", stripped):
            stripped = stripped.strip()
        lines.append(stripped)
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if converter.title and not text.startswith("# "):
        text = f"# {converter.title}\n\n{text}" if text else f"# {converter.title}"
    return text

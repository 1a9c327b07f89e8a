"""A strict HTML5 checker for the release report tests (html.parser based).

It fails on: unbalanced or misnested tags, end tags of void elements, unknown tags outside
SVG, duplicate ids, ``aria-labelledby`` / ``href="#..."`` pointing at missing ids, any
external resource (``<script>``, ``<link>``, ``<img>``, ``<iframe>``, ``src=`` or
``href=`` with a scheme, ``url(http...)`` in CSS), a missing ``lang`` or ``<title>``, and
an SVG without ``<title>`` and ``<desc>`` as its first children.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
HTML_TAGS = {
    "html", "head", "body", "title", "meta", "style", "header", "main", "footer", "section",
    "h1", "h2", "h3", "p", "span", "strong", "small", "code", "ol", "ul", "li", "dl", "dt",
    "dd", "table", "caption", "thead", "tbody", "tr", "th", "td", "figure", "figcaption",
    "details", "summary", "br", "svg",
}  # fmt: skip
SVG_TAGS = {"svg", "title", "desc", "defs", "pattern", "rect", "line", "circle", "polygon",
            "path", "text", "g"}  # fmt: skip
FORBIDDEN = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "base"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def iter(self) -> list[Element]:
        out = [self]
        for c in self.children:
            out.extend(c.iter())
        return out

    def all_text(self) -> str:
        parts = list(self.text)
        for c in self.children:
            parts.append(c.all_text())
        return "".join(parts)


class StrictParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack: list[Element] = [self.root]
        self.errors: list[str] = []
        self.doctype = False

    def handle_decl(self, decl: str) -> None:
        if decl.lower() == "doctype html":
            self.doctype = True

    def _in_svg(self) -> bool:
        return any(e.tag == "svg" for e in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in FORBIDDEN:
            self.errors.append(f"forbidden element <{tag}>")
        known = SVG_TAGS if self._in_svg() else HTML_TAGS
        if tag not in known:
            self.errors.append(f"unexpected element <{tag}>")
        el = Element(tag, a)
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._in_svg() and tag not in VOID:
            self.errors.append(f"self-closing non-void HTML element <{tag}/>")
        a = {k: v or "" for k, v in attrs}
        if tag in FORBIDDEN:
            self.errors.append(f"forbidden element <{tag}>")
        self.stack[-1].children.append(Element(tag, a))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"end tag of void element </{tag}>")
            return
        if len(self.stack) == 1 or self.stack[-1].tag != tag:
            self.errors.append(f"</{tag}> does not close <{self.stack[-1].tag}>")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)


def parse(html: str) -> Element:
    """Parse and check ``html``; raise AssertionError listing every problem."""
    p = StrictParser()
    p.feed(html)
    p.close()
    errors = list(p.errors)
    if len(p.stack) != 1:
        errors.append("unclosed: " + ", ".join(e.tag for e in p.stack[1:]))
    if not p.doctype:
        errors.append("no <!DOCTYPE html>")
    root = p.root
    els = root.iter()
    htmls = [e for e in els if e.tag == "html"]
    if len(htmls) != 1 or not htmls[0].attrs.get("lang"):
        errors.append("one <html lang=...> expected")
    if not any(e.tag == "title" and e.all_text().strip() for e in els if e.tag == "title"):
        errors.append("no document <title>")
    ids = [e.attrs["id"] for e in els if "id" in e.attrs]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        errors.append(f"duplicate ids: {dupes}")
    idset = set(ids)
    for e in els:
        for ref in e.attrs.get("aria-labelledby", "").split():
            if ref not in idset:
                errors.append(f"aria-labelledby {ref!r} names no element")
        for attr in ("src", "href", "xlink:href"):
            v = e.attrs.get(attr)
            if v is None:
                continue
            if re.match(r"^\s*[a-zA-Z][a-zA-Z0-9+.-]*:", v) or v.strip().startswith("//"):
                errors.append(f"external {attr}={v!r} on <{e.tag}>")
            elif v.startswith("#") and v[1:] not in idset:
                errors.append(f"{attr}={v!r} names no element")
        for k, v in e.attrs.items():
            if k.startswith("on"):
                errors.append(f"event handler attribute {k} on <{e.tag}>")
            if "url(" in v and not re.fullmatch(r"url\(#[\w-]+\)", v.strip()):
                errors.append(f"url() to outside the document in {k}={v!r}")
        if e.tag == "style" and re.search(r"url\(|@import", e.all_text()):
            errors.append("style loads a resource")
        if e.tag == "svg":
            first = [c.tag for c in e.children[:2]]
            if first != ["title", "desc"] or not all(c.all_text().strip() for c in e.children[:2]):
                errors.append(f"svg {e.attrs.get('id')!r} lacks a leading <title> and <desc>")
            if e.attrs.get("role") != "img":
                errors.append(f"svg {e.attrs.get('id')!r} lacks role=img")
    if errors:
        raise AssertionError("invalid report HTML:\n  " + "\n  ".join(errors))
    return root


def find(root: Element, tag: str, **attrs: str) -> list[Element]:
    return [
        e
        for e in root.iter()
        if e.tag == tag and all(e.attrs.get(k) == v for k, v in attrs.items())
    ]


def by_id(root: Element, ident: str) -> Element:
    hits = [e for e in root.iter() if e.attrs.get("id") == ident]
    assert len(hits) == 1, f"id {ident!r}: {len(hits)} elements"
    return hits[0]

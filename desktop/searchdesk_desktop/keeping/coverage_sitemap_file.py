"""One sitemap file read: its bytes unpacked and counted, its XML parsed as a stream into its URLs.

The reader (keeping/coverage_sitemaps.py) decides where it may go and fetches; what comes back is the person's
website's, so it is read here by two rules:

- **How much.** Bytes are counted after every layer of decoding (``Content-Encoding`` and a ``.gz``
  file inside it), a step at a time, so a compression bomb is stopped at the limit, not after.
- **How it parses.** XML as a stream through expat with every document type declaration refused (and
  so every entity and external entity: sitemaps never declare one), which is what defusedxml guards
  against, without a new dependency; at most ``max_urls`` URLs, each checked against the property.

No Qt and no network here.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final
from xml.parsers import expat

from .coverage_address import MAX_URL, Refused, Site, Why, check_url, page_inside

SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
_GZIP_MAGIC: Final = b"\x1f\x8b"
#: Each decompression step yields at most this much, so a bomb is caught a step at a time.
_STEP: Final = 256 * 1024


@dataclass
class FileRead:
    """One sitemap file read: its page URLs (or, for an index, its sitemaps' URLs) and what was left out."""

    url: str
    index: bool
    urls: list[str] = field(default_factory=list)
    skipped_long: int = 0
    skipped_outside: int = 0
    truncated: bool = False


def decoded(chunks: Iterable[bytes], content_encoding: str, most: int, url: str) -> Iterator[bytes]:
    """A file's bytes as sent, with every ``Content-Encoding`` layer and a ``.gz`` file inside undone,
    counted after each: more than ``most`` is Refused, as is an encoding other than gzip or deflate."""
    layers = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
    for layer in reversed(layers):
        if layer in ("gzip", "x-gzip"):
            chunks = inflate(chunks, 16 + zlib.MAX_WBITS, most, url)
        elif layer == "deflate":
            chunks = inflate(chunks, zlib.MAX_WBITS, most, url)
        elif layer != "identity":
            raise Refused(Why.ENCODING, url, layer)
    return counted(ungzip_file(chunks, most, url), most, url)


def inflate(chunks: Iterable[bytes], wbits: int, most: int, url: str) -> Iterator[bytes]:
    """One layer of gzip or deflate undone, a step at a time, counting what it yields."""
    total = 0
    inflater = zlib.decompressobj(wbits)
    try:
        for chunk in chunks:
            data = chunk
            while data:
                out = inflater.decompress(data, _STEP)
                total += len(out)
                if total > most:
                    raise Refused(Why.TOO_BIG, url)
                if out:
                    yield out
                data = inflater.unconsumed_tail
                if inflater.eof and inflater.unused_data:  # a second gzip member follows
                    data = inflater.unused_data
                    inflater = zlib.decompressobj(wbits)
        tail = inflater.flush()
    except zlib.error:
        raise Refused(Why.BROKEN, url, "damaged compression") from None
    total += len(tail)
    if total > most:
        raise Refused(Why.TOO_BIG, url)
    if tail:
        yield tail


def ungzip_file(chunks: Iterable[bytes], most: int, url: str) -> Iterator[bytes]:
    """A ``.gz`` sitemap (gzip's magic at the start, whatever the name says) unpacked; else as it is."""
    it = iter(chunks)
    head = b""
    for chunk in it:
        head += chunk
        if len(head) >= 2:
            break
    rest = _prepend(head, it)
    if head.startswith(_GZIP_MAGIC):
        yield from inflate(rest, 16 + zlib.MAX_WBITS, most, url)
    else:
        yield from rest


def _prepend(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from rest


def counted(chunks: Iterable[bytes], most: int, url: str) -> Iterator[bytes]:
    """The final bytes counted (a plain file's too): more than ``most`` is Refused."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > most:
            raise Refused(Why.TOO_BIG, url)
        yield chunk


def _names(*local: str) -> frozenset[str]:
    """Element names as expat reports them: in the sitemaps namespace, or in none."""
    return frozenset(n for name in local for n in (f"{SITEMAP_NS} {name}", name))


_ROOTS: Final = _names("urlset", "sitemapindex")
_ENTRIES: Final = _names("url", "sitemap")
_LOCS: Final = _names("loc")


class _Full(Exception):
    """Raised inside expat when the file has given its 50,000 URLs: reading stops there."""


class SitemapParser:
    """A sitemap or sitemap index read as a stream with expat, every document type refused."""

    def __init__(self, url: str, site: Site, max_urls: int) -> None:
        self.result = FileRead(url=url, index=False)
        self.site = site
        self.max_urls = max_urls
        self.entry = False
        self.root: str | None = None
        self.text: list[str] | None = None
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.buffer_size = 64 * 1024
        # Attributes as a list, not a dict built for each of a multilingual file's 700,000 elements: none is read.
        parser.ordered_attributes = True
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._doctype
        parser.EntityDeclHandler = self._entity
        parser.ExternalEntityRefHandler = self._external
        parser.StartElementHandler = self._start
        self.parser = parser

    def read(self, chunks: Iterable[bytes]) -> FileRead:
        url = self.result.url
        try:
            for chunk in chunks:
                self.parser.Parse(chunk, False)
            self.parser.Parse(b"", True)
            if self.text is not None:
                self._finish()
        except _Full:
            self.result.truncated = True
        except expat.ExpatError as exc:
            raise Refused(Why.BROKEN, url, str(exc)) from None
        if self.root is None:
            raise Refused(Why.BROKEN, url, "empty")
        return self.result

    def _doctype(self, *_: object) -> None:
        raise Refused(Why.DOCTYPE, self.result.url)

    def _entity(self, *_: object) -> None:
        raise Refused(Why.DOCTYPE, self.result.url)

    def _external(self, *_: object) -> int:
        raise Refused(Why.DOCTYPE, self.result.url)

    def _start(self, name: str, _attrs: list[str]) -> None:
        # Called for every element (a multilingual sitemap has a dozen per page), so it is lean: there
        # is no end-element handler; a <loc>'s text is collected until the next element starts (only
        # whitespace may sit between, and it is stripped), and text is listened to only inside a <loc>.
        if self.text is not None:
            self._finish()
        if name in _LOCS:
            if self.entry:
                self.text = []
                self.parser.CharacterDataHandler = self.text.append
        elif name in _ENTRIES:
            self.entry = True
        elif self.root is None:
            if name not in _ROOTS:
                raise Refused(Why.BROKEN, self.result.url, f"not a sitemap ({name.rpartition(' ')[2]})")
            self.root = name.rpartition(" ")[2]
            self.result.index = self.root == "sitemapindex"

    def _finish(self) -> None:
        assert self.text is not None
        self.parser.CharacterDataHandler = None
        text, self.text = "".join(self.text).strip(), None
        self._url(text)

    def _url(self, text: str) -> None:
        if not text:
            return
        if len(text) > MAX_URL:
            self.result.skipped_long += 1
            return
        if self.result.index:
            try:
                self.result.urls.append(str(check_url(self.site, text)))
            except Refused:
                self.result.skipped_outside += 1
                return
        elif page_inside(self.site, text):
            self.result.urls.append(text)  # as listed: Google inspects the address exactly as written
        else:
            self.result.skipped_outside += 1
            return
        if len(self.result.urls) >= self.max_urls:
            raise _Full

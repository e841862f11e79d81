"""searchdesk_server.text: how an approval question shows a value — addresses (`show_url`), the whole
form (`escaped`), the shortened form (`shorten`, `show_value`) and the look-alike table both owners and
hosts use (`LOOKALIKES`, `reads_like`). The end-to-end tests are tests/security/approval/test_values_read_true.py."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchdesk_server.agent import protocol
from searchdesk_server.text.addresses import LOOKALIKES, ShownUrl, reads_like, show_url
from searchdesk_server.text.display import SHOWN_LIMIT, SHOWN_MAX, escaped, is_plain_text, shorten, show_value

from .strategies import PROPERTY, hostile_text, long_text

# --- addresses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://www.example.com/a?b=c#d", ShownUrl("https://www.example.com/a?b=c#d")),  # ASCII: as it is
        ("https://bücher.de/", ShownUrl("https://xn--bcher-kva.de/ (bücher.de)")),
        ("sc-domain:bücher.de", ShownUrl("sc-domain:xn--bcher-kva.de (bücher.de)")),
        ("bücher.de", ShownUrl("xn--bcher-kva.de (bücher.de)")),  # a website's bare domain
        ("https://user@bücher.de:8443/x", ShownUrl("https://user@xn--bcher-kva.de:8443/x (bücher.de)")),
        ("https://例え.jp/", ShownUrl("https://xn--r8jz45g.jp/ (例え.jp)")),  # Han and Hiragana: one writing
        ("https://faß.de/", ShownUrl("https://xn--fa-hia.de/ (faß.de)")),  # IDNA 2008: not fass.de
        # Look-alikes: ASCII alone, and what they read like
        ("https://www.ex\u0430mple.com/", ShownUrl("https://www.xn--exmple-4nf.com/", "www.example.com")),
        ("sc-domain:\u0430pple.com", ShownUrl("sc-domain:xn--pple-43d.com", "apple.com")),
        ("https://\u0430\u0440\u0440\u04cf\u0435.com/", ShownUrl("https://xn--80ak6aa92e.com/", "apple.com")),  # whole
        ("https://g\u03bf\u03bfgle.com/", ShownUrl("https://xn--ggle-0nda.com/", "google.com")),  # Greek omicrons
        ("https://\u0585rg.am/", ShownUrl("https://xn--rg-ffd.am/", "org.am")),  # Armenian oh
        ("https://i\u0307nfo.com/", ShownUrl("https://xn--info-qwc.com/", "info.com")),  # a dot on an i
        # Not IDNA 2008 (width forms, joiners, upper case, another full stop): escaped, and read as they read
        (
            "https://ｅｘａｍｐｌｅ.com/",
            ShownUrl("https://" + "".join(f"\\u{ord(c):04x}" for c in "ｅｘａｍｐｌｅ") + ".com/", "example.com"),
        ),
        ("https://ex\u200dample.com/", ShownUrl("https://ex\\u200dample.com/", "example.com")),
        ("https://www.example\u3002com/", ShownUrl("https://www.example\\u3002com/", "www.example.com")),
        ("https://B\u00fccher.de/", ShownUrl("https://B\\u00fccher.de/")),
        # Mixed alphabets that read like no ASCII host: marked all the same
        ("https://b\u00fccher\u0434\u043e\u043c.de/", ShownUrl("https://xn--bcher-kva688c3br.de/", "")),
        ("https://pay\u0661.com/", ShownUrl("https://pay\\u0661.com/", "")),  # an Arabic-Indic one
        # Every other non-ASCII character of a URL: escaped
        ("https://example.com/\u0440\u0430th?q=\u00fc", ShownUrl("https://example.com/\\u0440\\u0430th?q=\\u00fc")),
        ("https://example.com/a\\b", ShownUrl("https://example.com/a\\\\b")),
    ],
)
def test_show_url(url: str, shown: ShownUrl) -> None:
    assert show_url(url) == shown
    assert shown.text.split(" (")[0].isascii() and is_plain_text(shown.text)


def test_the_standard_librarys_codec_is_idna_2003_which_names_another_host() -> None:
    """Why `show_url` uses the idna package: the stdlib codec maps ß to ss and drops joiners, so the host
    shown would be another one than the one a browser (UTS #46, non-transitional) goes to."""
    assert "faß.de".encode("idna") == b"fass.de"
    assert "ex\u200dample.com".encode("idna") == b"example.com"
    assert show_url("faß.de").text.startswith("xn--fa-hia.de") and show_url("ex\u200dample.com").looks_like


ADDRESS_CHARS = st.sampled_from(
    ["a", "e", "x", "n", "-", ".", "/", ":", "\\", "u", "0", "xn--", "\u0430", "\u0435", "ü", "ß", "\u200d", "ｅ", "。"]
)


@PROPERTY
@given(st.lists(ADDRESS_CHARS, max_size=12).map("".join), st.lists(ADDRESS_CHARS, max_size=12).map("".join))
def test_two_different_addresses_never_read_the_same(a: str, b: str) -> None:
    for head in ("https://", "sc-domain:", ""):
        if head + a != head + b:
            assert show_url(head + a) != show_url(head + b)


@PROPERTY
@given(hostile_text)
def test_an_address_shows_only_plain_ascii_but_its_own_form(url: str) -> None:
    shown = show_url(url)
    address = shown.text.rsplit(" (", 1)[0] if shown.text.endswith(")") and not url.isascii() else shown.text
    assert is_plain_text(shown.text) and address.isascii()
    assert shown.looks_like is None or shown.looks_like.isascii()


def test_the_look_alike_table_folds_to_ascii_and_keeps_what_owners_folded_before() -> None:
    pairs = {chr(k): v for k, v in LOOKALIKES.items()}
    assert all(not k.isascii() and isinstance(v, str) and v.isascii() for k, v in pairs.items())
    assert len(pairs) >= 50  # Cyrillic, Greek, Armenian, Latin and separators
    before = {  # the owners' table until issue 23, after the ASCII folds (i, 1 and | read as l; 0 as o; 5 as s)
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "l", "ј": "j", "ѕ": "s",
        "ԁ": "d", "ӏ": "l", "ο": "o", "α": "a", "ν": "v", "ρ": "p", "τ": "t", "ι": "l", "κ": "k", "ɡ": "g",
        "ı": "l",
    }  # fmt: skip
    for ch, folded in before.items():
        assert reads_like(f"{ch}@x.example") == f"{folded}@x.example"
    assert reads_like("ALICE@example.com") == reads_like("a1ice@example.com") == reads_like("аlice@example.com")


# --- the whole value and the shortened one ------------------------------------------------------


def groups(whole: str) -> str:
    digits = hashlib.sha256(whole.encode("utf-8")).hexdigest()[:32]
    return " ".join(digits[i : i + 4] for i in range(0, 32, 4))


SHORTENED = re.compile(
    r"(?P<start>.*)…\((?P<n>[0-9,]+) characters left out\)…(?P<end>.*) \[sha256 (?P<d>(?:[0-9a-f]{4} ){7}[0-9a-f]{4})\]"
)
#: Whole pieces only: an escape (a doubled backslash, \\uXXXX, \\UXXXXXXXX) or one other character.
PIECES = re.compile(r"(?:\\(?:\\|u[0-9a-f]{4}|U[0-9a-f]{8})|[^\\])*", re.DOTALL)


@PROPERTY
@given(st.one_of(hostile_text, long_text), st.booleans())
def test_a_value_is_shown_whole_up_to_200_and_else_as_start_count_end_and_128_bits(s: str, ascii_only: bool) -> None:
    whole = escaped(s, ascii_only=ascii_only)
    shown = show_value(s, ascii_only=ascii_only)
    assert shown == shorten(whole) and is_plain_text(shown) and len(shown) <= SHOWN_LIMIT
    assert "…" not in whole  # the shortening's own mark never occurs in a value shown whole
    if len(whole) <= SHOWN_MAX:
        assert shown == whole
        return
    parts = SHORTENED.fullmatch(shown)
    assert parts is not None, shown
    assert whole.startswith(parts["start"]) and whole.endswith(parts["end"])
    assert int(parts["n"].replace(",", "")) == len(whole) - len(parts["start"]) - len(parts["end"])
    assert parts["d"] == groups(whole)
    assert PIECES.fullmatch(parts["start"]) and PIECES.fullmatch(parts["end"])  # never half an escape


def test_the_socket_takes_what_the_shortening_makes() -> None:
    assert protocol.MAX_VALUE_CHARS == SHOWN_LIMIT == 240
    huge = "\U0001f600" * 200_000  # every character an escape of ten: two million shown characters
    assert len(show_value(huge)) <= SHOWN_LIMIT and len(show_value(huge, ascii_only=True)) <= SHOWN_LIMIT


def test_two_values_that_share_start_end_and_length_differ_by_their_digest() -> None:
    one, two = ("https://www.example.com/" + "a" * 190 + x + "b" * 100 for x in "12")
    assert show_value(one) != show_value(two)
    assert show_value(one)[:-50] == show_value(two)[:-50]  # the digest decides


# --- on the wire: values[].whole ---------------------------------------------------------------


def test_whole_is_additive_checked_as_value_is_and_counted_as_the_dialog_shows_it() -> None:
    long = "https://www.example.com/" + "p/" * 1000
    value = protocol.Value("Sitemap", shorten(long), whole=long)
    assert value.to_json() == {"label": "Sitemap", "value": shorten(long), "whole": long} and value.full == long
    assert protocol.Value("Property", "https://a.example/").to_json() == {
        "label": "Property",
        "value": "https://a.example/",
    }
    assert protocol.Value.from_json({"label": "x", "value": "y"}).full == "y"  # an older server sends no whole
    for bad in (None, "a\u200bb", 5):
        with pytest.raises(protocol.InvalidParams, match="whole"):
            protocol.Value.from_json({"label": "x", "value": "y", "whole": bad})
    shown = protocol.question_bytes("w", "c", (value,))
    assert shown == len("w\nc\n") + len("Sitemap: ") + len(long) + 1  # the dialog shows it whole

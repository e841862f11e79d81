"""searchdesk_server.text: cleaning, cutting, flattening, Markdown cells (`cleaning`), redaction, describing
(`phrases`)."""

from __future__ import annotations

import json
import math
import re
import string
import subprocess
import sys

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from searchdesk_server.text.cleaning import MAX_DEPTH, TOO_DEEP, clean, clean_json, cut, cut_bytes, flatten, md_cell
from searchdesk_server.text.phrases import describe
from searchdesk_server.text.redaction import REDACTED, redact

from .strategies import PROPERTY, any_char, hostile_json, hostile_text

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
SURROGATE = re.compile("[\ud800-\udfff]")
INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def strings_and_keys(value: object) -> list[str]:
    """Every string and key in a JSON-like value."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def all_keys(value: object) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# --- clean -------------------------------------------------------------------------------------


def test_clean_keeps_tab_newline_cr_and_every_script() -> None:
    text = "a\tb\nc\r\nd 😀 👩‍💻 日本語 العربية עברית é e\u0301 \u00a0"
    assert clean(text) == text


def test_clean_strips_c0_del_and_c1() -> None:
    assert clean("a\x00b\x07c\x1bd\x7fe\x80f\x85g\x9fh") == "abcdefgh"


def test_clean_repairs_lone_surrogates_and_joins_pairs() -> None:
    assert clean("a\ud800b") == "a\ufffdb"
    assert clean("\udc00") == "\ufffd"
    assert clean("\ud83d\ude00") == "😀"  # a pair spelled as two code points is the character it encodes
    assert clean("\ude00\ud83d") == "\ufffd\ufffd"  # the wrong order is not a pair
    assert clean("\ud83d\x00\ude00") == "😀"  # controls are removed before surrogates are checked


@PROPERTY
@given(hostile_text)
def test_clean_output_is_encodable_clean_and_idempotent(text: str) -> None:
    out = clean(text)
    out.encode("utf-8")  # strict: raises on any surrogate
    assert not CONTROL.search(out)
    assert not SURROGATE.search(out)
    assert clean(out) == out


# --- clean_json --------------------------------------------------------------------------------


def test_clean_json_cleans_strings_and_keys() -> None:
    assert clean_json({"a\x00": ["b\x1b", "\ud800"]}) == {"a": ["b", "\ufffd"]}


def test_clean_json_stringifies_keys_as_json_would() -> None:
    assert clean_json({1: "a", None: "b", False: "c", 2.5: "d"}) == {
        "1": "a",
        "null": "b",
        "false": "c",
        "2.5": "d",
    }


def test_clean_json_drops_prototype_and_marker_keys_at_every_level() -> None:
    value = {
        "__proto__": {"admin": True},
        "constructor": 1,
        "prototype": 2,
        "untrusted": False,
        "source": "searchdesk",
        "rows": [{"untrusted": False, "source": "x", "keys": ["q"], "nested": {"__proto__": 1, "ok": 1}}],
    }
    assert clean_json(value) == {"rows": [{"keys": ["q"], "nested": {"ok": 1}}]}


def test_clean_json_drops_a_key_that_only_becomes_reserved_after_cleaning() -> None:
    assert clean_json({"__pro\x00to__": 1, "untr\u0085usted": 2}) == {}


def test_clean_json_first_of_colliding_keys_wins() -> None:
    assert clean_json({"a": 1, "a\x00": 2}) == {"a": 1}
    assert clean_json({1: "int", "1": "str"}) == {"1": "int"}


def test_clean_json_leaves_out_non_finite_numbers_and_fixes_negative_zero() -> None:
    out = clean_json({"a": math.nan, "b": math.inf, "c": -math.inf, "d": -0.0, "e": [1.5, math.nan, -0.0]})
    assert out == {"d": 0.0, "e": [1.5, 0.0]}
    assert isinstance(out, dict)
    assert math.copysign(1, out["d"]) == 1
    assert math.copysign(1, out["e"][1]) == 1
    assert json.dumps(out, allow_nan=False) == '{"d": 0.0, "e": [1.5, 0.0]}'


def test_clean_json_keeps_bools_and_ints_as_they_are() -> None:
    out = clean_json([True, False, 0, 1, -7, None])
    assert out == [True, False, 0, 1, -7, None]
    assert isinstance(out, list)
    assert [type(v) for v in out] == [bool, bool, int, int, int, type(None)]


def test_clean_json_leaves_out_ints_json_cannot_write() -> None:
    assert clean_json([10**2000, 5]) == [5]


def test_clean_json_scalar_top_level() -> None:
    assert clean_json("a\x00") == "a"
    assert clean_json(math.nan) is None
    assert clean_json(-0.0) == 0.0
    assert clean_json(b"caf\xc3\xa9\xff") == "café\ufffd"


def test_clean_json_turns_tuples_into_lists() -> None:
    assert clean_json(("a", ("b",))) == ["a", ["b"]]


def test_clean_json_caps_depth_with_a_marker() -> None:
    value: list[object] = []
    cur = value
    for _ in range(10_000):  # far deeper than any recursion limit: the walk is iterative
        nxt: list[object] = []
        cur.append(nxt)
        cur = nxt
    out = clean_json(value)
    depth = 0
    node: object = out
    while isinstance(node, list):
        depth += 1
        node = node[0]
    assert depth == MAX_DEPTH
    assert node == TOO_DEEP
    json.dumps(out)  # and json's own recursion is nowhere near its limit


def test_clean_json_keeps_content_at_the_depth_limit() -> None:
    value: dict[str, object] = {"leaf": "x"}
    for _ in range(MAX_DEPTH - 1):
        value = {"n": value}
    assert clean_json(value) == value  # exactly MAX_DEPTH containers: nothing replaced


def test_clean_json_cuts_cycles() -> None:
    loop: list[object] = ["a"]
    loop.append(loop)
    out = clean_json(loop)
    assert isinstance(out, list)
    assert out[0] == "a"
    assert isinstance(out[1], str)
    json.dumps(out)


def test_clean_json_does_not_modify_its_input() -> None:
    value = {"a\x00": ["x\x1b", math.nan], "source": 1}
    snapshot = repr(value)
    clean_json(value)
    assert repr(value) == snapshot


def test_clean_json_wide_input() -> None:
    value = {f"k{i}": [i, f"v{i}\x00"] for i in range(50_000)}
    out = clean_json(value)
    assert isinstance(out, dict)
    assert len(out) == 50_000
    assert out["k49999"] == [49999, "v49999"]


@PROPERTY
@given(hostile_json)
def test_clean_json_output_is_strict_json_clean_and_idempotent(value: object) -> None:
    out = clean_json(value)
    text = json.dumps(out, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")  # no lone surrogate anywhere, keys included
    for s in strings_and_keys(out):
        assert not CONTROL.search(s)
        assert not SURROGATE.search(s)
    assert not all_keys(out) & {"__proto__", "constructor", "prototype", "untrusted", "source"}
    assert clean_json(out) == out
    assert json.loads(text) == out


# --- cut and cut_bytes -------------------------------------------------------------------------


def test_cut_examples() -> None:
    assert cut("abcdef", 10) == "abcdef"
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdef", 5) == "abcd…"
    assert cut("abcdef", 1) == "…"
    assert cut("abcdef", 0) == ""
    assert cut("abcdef", 3, marker="[…]") == "[…]"
    assert cut("abcdef", 2, marker="[…]") == "[…"


def test_cut_never_leaves_half_a_pair() -> None:
    # A pair spelled as two code points straddling the cut is joined first, then kept or cut whole.
    assert cut("ab\ud83d\ude00cd", 4) == "ab😀…"
    assert cut("abc\ud83d\ude00", 4) == "abc😀"
    assert cut("abcd\ud83d", 10) == "abcd\ufffd"
    assert not SURROGATE.search(cut("a\ud800" * 50, 7))


@PROPERTY
@given(hostile_text, st.integers(0, 80), st.sampled_from(["…", "", "[cut]", "\ud800"]))
def test_cut_bounds(text: str, limit: int, marker: str) -> None:
    out = cut(text, limit, marker)
    assert len(out) <= limit
    assert not SURROGATE.search(out)
    repaired = cut(text, 10**9, marker)  # no cut: just the repair
    if len(repaired) <= limit:
        assert out == repaired
    else:
        clean_marker = cut(marker, 10**9, "")
        if len(clean_marker) < limit:
            assert out.endswith(clean_marker)
            assert repaired.startswith(out[: len(out) - len(clean_marker)])


def test_cut_bytes_examples() -> None:
    assert cut_bytes("héllo", 2) == "h"
    assert cut_bytes("héllo", 3) == "hé"
    assert cut_bytes("€€", 5) == "€"
    assert cut_bytes("😀", 3) == ""
    assert cut_bytes("abc", 0) == ""
    assert cut_bytes("ab\ud83d\ude00", 6) == "ab😀"
    assert cut_bytes("ab\ud800", 10) == "ab\ufffd"


@PROPERTY
@given(hostile_text, st.integers(0, 120))
def test_cut_bytes_bounds(text: str, limit: int) -> None:
    out = cut_bytes(text, limit)
    data = out.encode("utf-8")  # strict
    assert len(data) <= limit
    repaired = cut(text, 10**9, "")
    assert repaired.startswith(out)
    if out != repaired:  # the next character would not have fitted
        assert len(repaired[: len(out) + 1].encode("utf-8")) > limit


# --- flatten and md_cell -----------------------------------------------------------------------


def test_flatten_examples() -> None:
    assert flatten("a\nb\tc\r\nd") == "a b c d"
    assert flatten("  many   spaces\u00a0\u3000here  ") == "many spaces here"
    assert flatten("evil\u202egnp.exe") == "evilgnp.exe"
    assert flatten("zero\u200bwidth\u200d\ufeff\u2060") == "zerowidth"
    assert flatten("\u2066iso\u2069 \u200emark\u200f \u061calm") == "iso mark alm"
    assert flatten("tag\U000e0069\U000e0067smuggling") == "tagsmuggling"
    assert flatten("x" * 300) == "x" * 199 + "…"
    assert flatten("abc", limit=2) == "a…"
    assert flatten("line\u2028sep\u2029para\x85nel") == "line sep para nel"


@PROPERTY
@given(hostile_text, st.integers(1, 80))
def test_flatten_bounds(text: str, limit: int) -> None:
    out = flatten(text, limit)
    assert len(out) <= limit
    out.encode("utf-8")
    assert not CONTROL.search(out)
    assert not INVISIBLE.search(out)
    assert "\n" not in out and "\t" not in out and "\r" not in out
    assert "  " not in out
    assert out == out.strip()
    if not out.endswith("…"):
        assert flatten(out, limit) == out


def unescape_cell(cell: str) -> str:
    """Read a cell back as a Markdown renderer would; fail on anything that could escape the cell."""
    out = []
    i = 0
    while i < len(cell):
        ch = cell[i]
        if ch == "\\":
            assert i + 1 < len(cell), "a trailing backslash would escape the cell's closing pipe"
            assert cell[i + 1] in "\\|`<"
            out.append(cell[i + 1])
            i += 2
            continue
        assert ch not in "|`<\n\r", f"unescaped {ch!r}"
        out.append(ch)
        i += 1
    return "".join(out)


def test_md_cell_examples() -> None:
    assert md_cell("a|b") == "a\\|b"
    assert md_cell("c:\\path") == "c:\\\\path"
    assert md_cell("`code`") == "\\`code\\`"
    assert md_cell("<script>") == "\\<script>"
    assert md_cell("two\nlines") == "two lines"
    assert md_cell("|" * 300, limit=10) == "\\|\\|\\|\\|…"


@PROPERTY
@given(hostile_text, st.integers(2, 80))
def test_md_cell_stays_in_its_cell(text: str, limit: int) -> None:
    cell = md_cell(text, limit)
    assert len(cell) <= limit
    cell.encode("utf-8")
    plain = unescape_cell(cell)
    if cell.endswith("…") and not flatten(text, 10**6).endswith("…"):
        plain = plain[:-1]
        assert flatten(text, 10**6).startswith(plain)
    else:
        assert plain == flatten(text, 10**6)


# --- redact ------------------------------------------------------------------------------------

PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"
    "-----END PRIVATE KEY-----\n"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer ya29.a0AfH6SMBx-abc_DEF.123", "ya29.a0AfH6SMBx-abc_DEF.123"),
        ("refresh 1//0gLm3x-Ab_cdEFGHIJKLmnopQRSTUVWXYZ end", "1//0gLm3x-Ab_cdEFGHIJKLmnopQRSTUVWXYZ"),
        ('"client_secret": "GOCSPX-AbCdEf123_456-xyz"', "GOCSPX-AbCdEf123_456-xyz"),
        ("key=AIzaSyA-1234567890abcdefghijklmnopqrstu&x=1", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
        (f"oops {PEM} after", "MzEfYyjiWA4R4"),
        ("cut off: " + PEM[:90], "MIIEvQIBADANBgkqhkiG9w0"),
        ("...0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----", "BKcwggSjAgEAAoIBAQC7"),
        (json.dumps({"type": "service_account", "private_key": PEM, "x": 1}), "MIIEvQIBADAN"),
        (json.dumps({"private_key": "not-pem-shaped-but-secret"}), "not-pem-shaped-but-secret"),
        (json.dumps(json.dumps({"private_key": "inner-secret-value"})), "inner-secret-value"),
        ("{'private_key': 'repr-secret-value'}", "repr-secret-value"),
        ('{"refresh_token": "opaque-refresh-value"}', "opaque-refresh-value"),
        ('{"access_token": "opaque-access-value", "expires_in": 3599}', "opaque-access-value"),
        ('{"private_key": "cut-off-secret', "cut-off-secret"),
    ],
)
def test_redact_shapes(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert REDACTED in out


def test_redact_keeps_ordinary_text_and_structure() -> None:
    text = "Google said: 403 PERMISSION_DENIED for https://example.com/page1/ (see https://console.cloud.google.com)"
    assert redact(text) == text
    out = redact(json.dumps({"private_key_id": "abc123", "private_key": "secret", "client_email": "a@b.iam"}))
    assert '"private_key_id": "abc123"' in out
    assert '"client_email": "a@b.iam"' in out
    assert "secret" not in out


def test_redact_adjacent_secrets_do_not_shield_each_other() -> None:
    pem_cut = "-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA1234"
    text = pem_cut + "ya29.tail-of-the-token" + "1//0gABCDEFGHIJ.more" + "AIzaSyB-0123456789abcdefghij"
    out = redact(text)
    for part in ("tail-of-the-token", "0gABCDEFGHIJ", "more", "SyB-0123456789", "MIIEowIBAAKCAQEA"):
        assert part not in out


def test_redact_is_linear_on_long_base64() -> None:
    # A regex that backtracks from every start would take minutes here; this finishes at once.
    blob = "A" * 2_000_000 + "-----END PRIVATE KEY-----"
    assert redact(blob) == REDACTED
    assert redact("B" * 2_000_000) == "B" * 2_000_000


_URLSAFE = string.ascii_letters + string.digits + "-_"
_BASE64 = string.ascii_letters + string.digits + "+/"
# (how the secret is written around its body, the body's alphabet): tokens are URL-safe base64,
# key material is standard base64 (a PEM body never holds "-" or "_").
_SHAPES = [
    (lambda b: "ya29." + b, _URLSAFE),
    (lambda b: "1//0" + b, _URLSAFE),
    (lambda b: "GOCSPX-" + b, _URLSAFE),
    (lambda b: "AIza" + b, _URLSAFE),
    (lambda b: "-----BEGIN PRIVATE KEY-----\n" + b + "\n-----END PRIVATE KEY-----\n", _BASE64),
    (lambda b: "-----BEGIN PRIVATE KEY-----\\n" + b, _BASE64),  # cut off, JSON-escaped newlines
    (lambda b: b + "\n-----END RSA PRIVATE KEY-----", _BASE64),  # beginning cut off
    (lambda b: '"private_key": "' + b + '"', _URLSAFE + "+/ "),
    (lambda b: json.dumps({"private_key": b}), _URLSAFE + "+/ "),
]


@st.composite
def _planted(draw: st.DrawFn) -> tuple[str, str, str]:
    shape, alphabet = draw(st.sampled_from(_SHAPES))
    body = draw(st.text(alphabet=alphabet, min_size=24, max_size=60))
    before = draw(_SURROUNDING)
    return before, shape(body), body


_SURROUNDING = st.lists(st.one_of(any_char, st.sampled_from([" ", "\n", '"', ":", "=", "/", "."])), max_size=40).map(
    "".join
)


@PROPERTY
@given(st.lists(_planted(), min_size=1, max_size=4), _SURROUNDING)
def test_planted_secrets_never_survive(planted: list[tuple[str, str, str]], tail: str) -> None:
    text = "".join(before + secret for before, secret, _ in planted) + tail
    plain = "".join(before for before, _, _ in planted) + tail
    windows = {body[i : i + 12] for _, _, body in planted for i in range(len(body) - 11)}
    assume(not any(w in plain for w in windows))
    out = redact(text)
    for window in windows:
        assert window not in out


# --- describe ----------------------------------------------------------------------------------


def test_describe_examples() -> None:
    assert describe("sc-domain:example.com") == '"sc-domain:example.com"'
    assert describe("https://example.com/a_b") == '"https://example.com/a_b"'
    assert describe("x" * 3012) == "a 3,012-character value"
    assert describe("a\x00b") == "a 3-character value with control characters or line breaks"
    assert describe("two\nlines") == "a 9-character value with control characters or line breaks"
    assert describe("rtl\u202e") == "a 4-character value with invisible formatting characters"
    assert describe("caf\u00e9") == "a 4-character value with non-ASCII characters"
    assert describe("\ud800") == "a 1-character value with invalid characters"
    assert describe("a\"b'c") == "a 5-character value with unusual punctuation"
    assert describe("") == "an empty value"
    assert describe("x" * 40) == '"' + "x" * 40 + '"'
    assert describe("x" * 41) == "a 41-character value"
    assert describe(None) == "null"
    assert describe(True) == "true"
    assert describe(42) == "42"
    assert describe(10**30) == "a very large number"
    assert describe(math.nan) == "a number that is not finite"
    assert describe([1, 2]) == "a list of 2 entries"
    assert describe({"a": 1}) == "an object with 1 field"
    assert describe(object()) == "a value of an unexpected type"


@PROPERTY
@given(st.one_of(hostile_text, st.text(alphabet=string.printable, max_size=60), hostile_json))
def test_describe_never_echoes_unplain_text(value: object) -> None:
    out = describe(value)
    assert out.isascii() and out.isprintable()
    assert len(out) <= 80
    if isinstance(value, str) and not re.fullmatch(r"[A-Za-z0-9 ._:/@+\-]{1,40}", value):
        if len(value) >= 3:
            assert value not in out
        assert not out.startswith('"')


# --- import cost -------------------------------------------------------------------------------


def test_text_and_budget_import_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules)\n"
        "import searchdesk_server.budget\n"
        "from searchdesk_server.text import addresses, cleaning, display, phrases, redaction\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(m for m in new if m not in sys.stdlib_module_names and m != 'searchdesk_server'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_redact_known_secrets_and_any_bearer_token() -> None:
    out = redact("used opaque-token-1234 then Bearer xyz.opaque_2; short abc", known=["opaque-token-1234", "abc"])
    assert "opaque-token-1234" not in out and "xyz.opaque_2" not in out
    assert out == f"used {REDACTED} then Bearer {REDACTED}; short abc"  # a short "secret" is ordinary text

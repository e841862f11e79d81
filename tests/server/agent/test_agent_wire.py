"""The agent socket's messages on the wire: today's bytes recorded, and every field accounted for.

A restructuring of how messages serialise (one generic `to_json` on the base) must not change one byte
an older or newer peer reads: the recording below was taken from the hand-written serialisers it
replaced, for one instance of every message with every field set ("full") and one with each additive
field left at its default ("older": what an older peer sends, and must keep seeing). The field checks
are built from the classes' own fields, so a field added later is covered without touching this file.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from searchdesk_server.agent import protocol as p

FP = "a" * 64
DG = "b" * 64
REQ = p.Requester(server="srv-1", account="a@b.example", demo=False)
CLIENT = p.ClientInfo(name="Claude Desktop", version="1.2")
FORM_FULL = p.NotificationForm(
    title="Remove a property", subtitle="as a@b", body="https://x/\nGone.", show_question="Several"
)
VALUE_FULL = p.Value(label="Property", value="https://x/…", whole="https://x/whole")


def samples() -> dict[str, tuple[Any, Any]]:
    """(full: every field set; older: each field an older peer must not see at its default)."""
    return {
        "ClientInfo": (CLIENT, p.ClientInfo(name="Claude Desktop")),
        "HelloParams": (
            p.HelloParams(protocol=1, app="searchdesk-server", version="0.9", client=CLIENT),
            p.HelloParams(protocol=1, app="searchdesk-server", version="0.9"),
        ),
        "Hello": (
            p.Hello(app="SearchDesk", version="0.9", protocol=1, features=("requester", "accounts")),
            p.Hello(app="SearchDesk", version="0.9"),
        ),
        "Requester": (REQ, p.Requester(server="srv-2", account=None, demo=True)),
        "TokenParams": (
            p.TokenParams(
                scopes=("https://www.googleapis.com/auth/webmasters",),
                force_refresh=True,
                requester=REQ,
                account="a@b.example",
            ),
            p.TokenParams(scopes=("https://www.googleapis.com/auth/webmasters",)),
        ),
        "Token": (
            p.Token(access_token="ya29.tok", expires_in=3599, kind="oauth", account="a@b.example"),
            p.Token(access_token="ya29.tok", expires_in=0, kind="service_account", account=""),
        ),
        "AccountsParams": (p.AccountsParams(requester=REQ), p.AccountsParams()),
        "AccountInfo": (
            p.AccountInfo(account="a@b.example", kind="oauth", default=True, quota_project="123"),
            p.AccountInfo(account="a@b.example", kind="service_account", default=False),
        ),
        "AccountList": (
            p.AccountList(
                accounts=(
                    p.AccountInfo(account="a@b.example", kind="oauth", default=True, quota_project="123"),
                    p.AccountInfo(account="c@d.example", kind="oauth", default=False),
                )
            ),
            p.AccountList(accounts=()),
        ),
        "Value": (VALUE_FULL, p.Value(label="Property", value="https://x/")),
        "NotificationForm": (FORM_FULL, p.NotificationForm(title="Remove a property", body="https://x/")),
        "ApprovalRequest": (
            p.ApprovalRequest(
                request_id="req-1",
                tool="delete_site",
                what="Remove it.",
                consequence="Data goes.",
                values=(VALUE_FULL, p.Value(label="Owner", value="o@x")),
                fingerprint=FP,
                client=CLIENT,
                wait_s=40.0,
                requester=REQ,
                notification=FORM_FULL,
            ),
            p.ApprovalRequest(
                request_id="req-1",
                tool="delete_site",
                what="Remove it.",
                consequence="Data goes.",
                values=(p.Value(label="Property", value="https://x/"),),
                fingerprint=FP,
                client=p.ClientInfo(name="c"),
                wait_s=0,
            ),
        ),
        "ApprovalResult": (
            p.ApprovalResult(decision="approve", fingerprint=FP, answered_in="notification"),
            p.ApprovalResult(decision="pending", fingerprint=FP),
        ),
        "StatusParams": (p.StatusParams(fingerprint=FP, requester=REQ, digest=DG), p.StatusParams(fingerprint=FP)),
        "StatusResult": (p.StatusResult(decision="deny", answered_in="dialog"), p.StatusResult(decision="none")),
        "CancelParams": (p.CancelParams(request_id="req-1"), p.CancelParams(request_id="r")),
        "CancelResult": (p.CancelResult(cancelled=True), p.CancelResult(cancelled=False)),
    }


#: Recorded from the hand-written `to_json` of every message (commit eb13362), byte for byte.
WIRE: dict[tuple[str, str], str] = {
    ("ClientInfo", "full"): '{"name":"Claude Desktop","version":"1.2"}',
    ("ClientInfo", "older"): '{"name":"Claude Desktop","version":""}',
    (
        "HelloParams",
        "full",
    ): '{"protocol":1,"app":"searchdesk-server","version":"0.9","client":{"name":"Claude Desktop","version":"1.2"}}',
    ("HelloParams", "older"): '{"protocol":1,"app":"searchdesk-server","version":"0.9"}',
    ("Hello", "full"): '{"app":"SearchDesk","version":"0.9","protocol":1,"features":["requester","accounts"]}',
    ("Hello", "older"): '{"app":"SearchDesk","version":"0.9","protocol":1,"features":[]}',
    ("Requester", "full"): '{"server":"srv-1","account":"a@b.example","demo":false}',
    ("Requester", "older"): '{"server":"srv-2","account":null,"demo":true}',
    (
        "TokenParams",
        "full",
    ): '{"scopes":["https://www.googleapis.com/auth/webmasters"],"force_refresh":true,"requester":{"server":"srv-1","account":"a@b.example","demo":false},"account":"a@b.example"}',
    ("TokenParams", "older"): '{"scopes":["https://www.googleapis.com/auth/webmasters"],"force_refresh":false}',
    ("Token", "full"): '{"access_token":"ya29.tok","expires_in":3599,"kind":"oauth","account":"a@b.example"}',
    ("Token", "older"): '{"access_token":"ya29.tok","expires_in":0,"kind":"service_account","account":""}',
    ("AccountsParams", "full"): '{"requester":{"server":"srv-1","account":"a@b.example","demo":false}}',
    ("AccountsParams", "older"): "{}",
    ("AccountInfo", "full"): '{"account":"a@b.example","kind":"oauth","default":true,"quota_project":"123"}',
    ("AccountInfo", "older"): '{"account":"a@b.example","kind":"service_account","default":false}',
    (
        "AccountList",
        "full",
    ): '{"accounts":[{"account":"a@b.example","kind":"oauth","default":true,"quota_project":"123"},{"account":"c@d.example","kind":"oauth","default":false}]}',
    ("AccountList", "older"): '{"accounts":[]}',
    ("Value", "full"): '{"label":"Property","value":"https://x/…","whole":"https://x/whole"}',
    ("Value", "older"): '{"label":"Property","value":"https://x/"}',
    (
        "NotificationForm",
        "full",
    ): '{"title":"Remove a property","subtitle":"as a@b","body":"https://x/\\nGone.","show_question":"Several"}',
    ("NotificationForm", "older"): '{"title":"Remove a property","body":"https://x/"}',
    (
        "ApprovalRequest",
        "full",
    ): '{"request_id":"req-1","tool":"delete_site","what":"Remove it.","consequence":"Data goes.","values":[{"label":"Property","value":"https://x/…","whole":"https://x/whole"},{"label":"Owner","value":"o@x"}],"fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","client":{"name":"Claude Desktop","version":"1.2"},"wait_s":40.0,"requester":{"server":"srv-1","account":"a@b.example","demo":false},"notification":{"title":"Remove a property","subtitle":"as a@b","body":"https://x/\\nGone.","show_question":"Several"}}',
    (
        "ApprovalRequest",
        "older",
    ): '{"request_id":"req-1","tool":"delete_site","what":"Remove it.","consequence":"Data goes.","values":[{"label":"Property","value":"https://x/"}],"fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","client":{"name":"c","version":""},"wait_s":0.0}',
    (
        "ApprovalResult",
        "full",
    ): '{"decision":"approve","fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","answered_in":"notification"}',
    (
        "ApprovalResult",
        "older",
    ): '{"decision":"pending","fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}',
    (
        "StatusParams",
        "full",
    ): '{"fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","requester":{"server":"srv-1","account":"a@b.example","demo":false},"digest":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}',
    ("StatusParams", "older"): '{"fingerprint":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}',
    ("StatusResult", "full"): '{"decision":"deny","answered_in":"dialog"}',
    ("StatusResult", "older"): '{"decision":"none"}',
    ("CancelParams", "full"): '{"request_id":"req-1"}',
    ("CancelParams", "older"): '{"request_id":"r"}',
    ("CancelResult", "full"): '{"cancelled":true}',
    ("CancelResult", "older"): '{"cancelled":false}',
}


MESSAGES = sorted(samples())


def message_classes() -> set[str]:
    """Every message class the protocol declares, found from the module itself (a new one is included)."""
    return {
        name
        for name, value in vars(p).items()
        if isinstance(value, type) and issubclass(value, p.Message) and value is not p.Message
    }


@pytest.mark.parametrize("name", MESSAGES)
@pytest.mark.parametrize("kind", ["full", "older"])
def test_the_wire_bytes_are_as_recorded(name: str, kind: str) -> None:
    full, older = samples()[name]
    sample = full if kind == "full" else older
    recorded = WIRE[(name, kind)]
    assert json.dumps(sample.to_json(), ensure_ascii=False, separators=(",", ":")) == recorded
    assert p.encode_result(7, sample.to_json()) == b'{"jsonrpc":"2.0","id":7,"result":' + recorded.encode() + b"}\n"


def test_every_message_has_a_recorded_sample() -> None:
    assert message_classes() == set(MESSAGES)
    assert {key for key in WIRE} == {(name, kind) for name in MESSAGES for kind in ("full", "older")}


@pytest.mark.parametrize("name", MESSAGES)
def test_every_field_reaches_the_wire(name: str) -> None:
    full, _older = samples()[name]
    cls = type(full)
    names = [f.name for f in dataclasses.fields(cls)]
    wire = full.to_json()
    assert list(wire) == names  # every field, in declaration order
    assert cls.from_json(json.loads(json.dumps(wire))) == full  # and each arrives as it was sent


@pytest.mark.parametrize("name", MESSAGES)
def test_fields_for_newer_peers_are_withheld_exactly_at_their_default(name: str) -> None:
    full, older = samples()[name]
    cls = type(full)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    omitted = cls.OMIT_FOR_OLDER
    assert omitted <= set(fields)
    for field in omitted:  # the full sample sends it, the older one holds the default and does not
        assert getattr(full, field) != fields[field].default
        assert getattr(older, field) == fields[field].default
    assert set(older.to_json()) == set(fields) - omitted  # every other field, even at its default
    assert cls.from_json(older.to_json()) == older

"""A yes is bound to what was shown, all of it (issue 36, 3): the app's real listener refuses a question
whose `whole` does not shorten to its `value`, and no dialog ever shows it.

The words' digest covers each value as the words hold it (shortened when long); the dialog shows the
`whole` beside it. A request is made by hand here, as a hostile program on the same computer could send
it: a long sitemap's `value` (and so the digest a yes is bound to) is one address, its `whole` another.
The real listener and the real dialog queue (`Setup`, as the listener's own tests use them) answer it; the
server's own agent client reads the answer. On the code before issue 36 the question was kept and its
dialog showed the other address.
"""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent.framing import ErrorCode
from searchdesk_server.agent.protocol import ApprovalRequest, Value
from searchdesk_server.text.display import shorten
from tests.desktop.agent_helpers import in_background
from tests.desktop.agent_socket.test_listener import Setup, setup, sock_dir  # noqa: F401 (fixtures)
from tests.desktop.helpers import question

SITE = "https://example.com/"
BOUND = f"{SITE}{'catalogue/' * 30}sitemap.xml"  # what the words (and so a yes) hold, shortened
SHOWN = f"{SITE}{'catalogue/' * 15}{'archives/' * 17}sitemap.xml"  # another address, same start and end


def sitemap_question(whole: str, request_id: str) -> ApprovalRequest:
    values = (Value("Property", SITE), Value("Sitemap", shorten(BOUND), whole=whole))
    return question(SITE, tool="delete_sitemap", values=values, wait_s=0, request_id=request_id)


async def ask(path: str, request: ApprovalRequest) -> str:
    async with agent_client.AgentClient(path) as c:
        return await c.ask(request)


def test_the_pair_reads_alike_but_is_two_addresses() -> None:
    assert SHOWN != BOUND and len(SHOWN) > 200 and len(BOUND) > 200
    assert shorten(SHOWN) != shorten(BOUND)  # the digest in the shortened form tells them apart
    assert shorten(SHOWN)[:60] == shorten(BOUND)[:60]  # and a person reading the start would not


def test_a_whole_that_does_not_shorten_to_its_value_is_refused_and_never_shown(setup: Setup, qtbot: QtBot) -> None:  # noqa: F811
    with pytest.raises(agent_client.AgentRemoteError) as refused:
        in_background(qtbot, lambda: ask(setup.path, sitemap_question(SHOWN, "forged")))
    assert refused.value.code == ErrorCode.INVALID_PARAMS
    assert "values[1].whole does not shorten to values[1].value" in str(refused.value)
    assert "nothing was approved" in str(refused.value)
    qtbot.wait(200)  # a dialog the book opened would be on screen by now
    assert setup.queue.dialog is None
    assert setup.book.open_entries() == [] and setup.book.activity == []
    # The control: the same question with the whole its value shortens is kept and shown whole.
    assert in_background(qtbot, lambda: ask(setup.path, sitemap_question(BOUND, "true"))) == "pending"
    qtbot.waitUntil(lambda: setup.queue.dialog is not None and setup.queue.dialog.isVisible())
    assert setup.queue.dialog is not None
    assert setup.queue.dialog.value_labels[1][1].text() == BOUND

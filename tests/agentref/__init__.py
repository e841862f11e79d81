"""The reference test agent: the other end of the agent socket, for tests (not shipped).

    from tests.agentref import AgentThread, AgentProcess, Script, ApprovalScript, TokenScript

    with AgentThread() as agent:                 # in-process, its own loop in a thread
        agent.start("/tmp/sd-x/agent.sock", Script(approval=ApprovalScript("approve")))
        ...                                      # the server side connects to that path
        agent.wait_for_requests("approval/request")

`AgentProcess` is the same as a subprocess (`python -m tests.agentref --socket PATH --script JSON`),
for tests that run it beside a server subprocess. Pytest fixtures: tests/agentref/fixtures.py.
"""

from __future__ import annotations

from .agent import Recorded, ReferenceAgent
from .harness import AgentProcess, AgentThread, ListenerHarness
from .script import AccountScript, ApprovalScript, Script, TokenScript

__all__ = [
    "AccountScript",
    "AgentProcess",
    "AgentThread",
    "ApprovalScript",
    "ListenerHarness",
    "Recorded",
    "ReferenceAgent",
    "Script",
    "TokenScript",
]

"""The app's end of the agent socket: servers ask it for tokens and ask the person their questions.

- ``listener``: a handler per method of ``searchdesk_server.agent.protocol``'s table.
- ``connection``: below the methods: accepting, the peer's credentials, line framing.
- ``account_directory``: the accounts the listener hands tokens for, as it sees them.

Named ``agent_socket``, not ``socket``, so that nothing here can be mistaken for the standard library's.
"""

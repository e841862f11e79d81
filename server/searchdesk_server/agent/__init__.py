"""The agent socket: how the server talks to the desktop app (tokens and a person's answer).

`protocol` is the one definition both programs use (pure stdlib, cheap to import); `paths` says where
the socket lives and runs the trust checks both ends share; `client` is the server's side (asyncio).
Nothing here is imported on the server's start-up path: import the submodule you need, when you need it.
"""

"""The agent socket: how the server talks to the desktop app (tokens and a person's answer).

`protocol` is the one definition both programs use: the table of methods (`METHODS`, each entry
naming its params and result classes) and, re-exported from `messages`, the messages themselves
(pydantic dataclasses, validated on both ends); `framing` is the JSON-RPC line format and the stable
error codes under it, and `wire` the plumbing every message shares. `paths` says where the socket
lives and runs the trust checks both ends share; `winpipe` is the Windows named pipe; `client` is the
server's side (asyncio), over one `connection`, raising `client_errors`. No Qt here, and nothing is
imported on the server's start-up path: import the submodule you need, when you need it.
"""

"""The optional update check: is a newer SearchDesk out?

- ``manifest``: the signed manifest, its signature, its freshness, versions, the one fetch; no Qt.
- ``checker``: the daily timer, the question, the notice and About's line; the release key the build
  wrote in.
"""

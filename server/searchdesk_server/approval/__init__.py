"""Asking a person before the four irreversible tools act.

Three modules, imported one way:
- `question`: the words a person reads and the fingerprint every answer is bound to. A leaf that both
  programs import at the top (the desktop app lays out what it receives with the same constants);
  importing it never pulls in the chain below.
- `builders`: one function per guarded tool that reads Google's state and returns its `Question`.
- `chain`: who is asked, in which order, and what a guarded call returns when nobody said yes.

This package's own module is only this docstring, so that `import searchdesk_server.approval.question`
costs what the words cost, not the whole chain.
"""

"""Asking a person before the four irreversible tools act.

Its modules, imported one way (each only imports those listed before it):
- `question` (with `addresses`, `owner_facts`, `notification_form`): the words a person reads and the
  fingerprint every answer is bound to. A leaf that both programs import at the top (the desktop app
  lays out what it receives with the same constants); importing it never pulls in the chain below.
- `builders`: one function per guarded tool that reads Google's state and returns its `Question`.
- `outcomes`: what each step comes to, as types (`Approved`, `Answer`, `NotAsked`) and the results
  every step gives when nobody said yes; `owner_steps`: an owner change too large for one question.
- `ask_client` (step 1, the client's own dialog) and `ask_app` (step 2, the SearchDesk app's).
- `chain`: who is asked, in which order, the two-call token (step 3), and what a guarded call returns
  when nobody said yes; a yes acts through a call made with its `runtime.Consent`.

This package's own module is only this docstring, so that `import searchdesk_server.approval.question`
costs what the words cost, not the whole chain.
"""

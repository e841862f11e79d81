"""Accounts and sign-in: who is signed in, each account's state and tokens, and the keyring.

- ``store``: the accounts the app holds (settings for the list, the keyring for the secrets; no Qt).
- ``keystore``: the one kind of secret kept, Google refresh tokens, in the OS keyring only.
- ``signin``: Google's sign-in for an installed app (loopback redirect, PKCE, the system browser).
- ``tokens``: the short-lived access tokens a server is handed; the long-lived secret stays here.
- ``google_accounts``: each account's state, read from the store and the keyring.
- ``model``: the accounts as the windows show them (a Qt list model).
"""

"""Talking to Google: the hardened HTTP client, credentials and errors."""

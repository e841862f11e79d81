"""The attempts one request gets: a 401 answered by one refresh, and retries only where repeating
a request is harmless, bounded in number, in waiting and by the caller's deadline.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Awaitable, Callable

import anyio
import httpx

from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.google.wire import DEFAULT_POLICY, Answer, RetryPolicy, send_once

from ..text.phrases import minutes

__all__ = ["RETRY_STATUSES", "fetch"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def _backoff(policy: RetryPolicy, attempt: int) -> float:
    return float(policy.base_delay * (2 ** (attempt - 1)) * (0.5 + random.random()))


async def fetch(
    http: httpx.AsyncClient,
    build: Callable[[bool], Awaitable[httpx.Request]],
    *,
    explain: Callable[[Answer], GoogleError],
    cap: int,
    retry: bool,
    deadline: float | None = None,
    refresh_on_401: bool = False,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> Answer:
    """Run a request under the retry rules and return its successful (2xx) answer.

    ``build(force_refresh)`` makes the request (fetching a token if need be). A 401 rebuilds it once
    with force_refresh=True when ``refresh_on_401`` is set — whatever ``retry`` says, because Google
    acted on nothing it refused to authenticate. Other failures are retried only when ``retry`` is
    set: on 429/500/502/503/504 and on network errors, never on 403, at most ``policy.attempts``
    times, never longer than ``policy.max_wait`` between attempts, and never starting an attempt
    that could still be running (``policy.request_timeout``) at ``deadline`` (time.monotonic()).
    """
    attempt = 0
    refreshed = False
    force_refresh = False
    while True:
        request = await build(force_refresh)
        force_refresh = False
        attempt += 1
        try:
            answer = await send_once(http, request, cap, policy.request_timeout)
        except GoogleError as err:
            if err.kind is not ErrorKind.NETWORK or not err.transient:
                raise
            failure, wait_hint = err, None
        else:
            if answer.status < 300:
                return answer
            if answer.status == 401 and refresh_on_401 and not refreshed:
                if deadline is not None and time.monotonic() + policy.request_timeout > deadline:
                    raise explain(answer).with_attempts(attempt)  # a resend could outlast the batch
                refreshed = True
                force_refresh = True
                attempt -= 1  # the refresh is its own single retry, not one of the budgeted ones
                continue
            if answer.status == 401 and not refresh_on_401:
                # Sent once by rule: refresh the token for the next call, resend nothing.
                with contextlib.suppress(GoogleError):
                    await build(True)
            failure = explain(answer)
            wait_hint = answer.retry_after if answer.retry_after is not None else failure.retry_after
            if answer.status not in RETRY_STATUSES:
                raise failure.with_attempts(attempt)
        if not retry or attempt >= policy.attempts:
            raise failure.with_attempts(attempt)
        wait = _backoff(policy, attempt)
        if wait_hint is not None:
            if wait_hint > policy.max_wait:
                raise _asked_to_wait(failure, wait_hint, attempt)
            wait = max(wait, wait_hint)
        wait = min(wait, policy.max_wait)
        if deadline is not None and time.monotonic() + wait + policy.request_timeout > deadline:
            raise failure.with_attempts(attempt)  # the next attempt might still be running at the deadline
        await anyio.sleep(wait)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{round(seconds)} seconds"
    if seconds < 2 * 3600:
        return minutes(seconds)
    return f"{round(seconds / 3600)} hours"


def _asked_to_wait(failure: GoogleError, seconds: float, attempt: int) -> GoogleError:
    summary = failure.summary + f" Google asked to wait about {_duration(seconds)} before trying again."
    return GoogleError(
        failure.kind,
        summary,
        status=failure.status,
        upstream=failure.upstream,
        retry_after=seconds,
        attempts=attempt,
    )

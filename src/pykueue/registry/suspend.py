"""Waiting on the event loop from inside a synchronous registry write, and what that write is for.

Owned by ``registry/``. The registry is synchronous (one write runs from decode to store without
yielding), but an admission webhook is a network call that may take seconds. The API server runs a
write that may meet a webhook with :func:`run_suspendable`: the write runs in a greenlet, and when
the admission chain needs a webhook's answer it calls :func:`wait_for`, which hands the awaitable
to the request's task and sleeps until its result comes back. The event loop keeps serving every
other request meanwhile, and the write resumes on the same thread, so the registry needs no locks.
``LocalClient`` (the in-process controllers) does the same. Synchronous work started anywhere else
(a watch converting events) is not in such a greenlet: :func:`wait_for` then runs the awaitable to
completion on a private loop in a worker thread, blocking its caller for at most the webhook's timeout.

:class:`RequestContext` carries what admission needs to know about the HTTP request behind a write:
the user (for ``AdmissionReview.request.userInfo``), the API version the client used, and the
warnings webhooks return (for the response's ``Warning`` headers). It lives in a context variable
that the greenlet inherits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from greenlet import greenlet

__all__ = [
    "RequestContext",
    "UserInfo",
    "current_request",
    "reset_request",
    "run_suspendable",
    "set_request",
    "wait_for",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class UserInfo:
    """An authenticated identity, as kube's ``authentication.k8s.io/v1`` UserInfo."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        return out


IN_PROCESS_USER = UserInfo("system:apiserver", groups=("system:authenticated", "system:masters"))
"""Who writes when no HTTP request is behind a write (controllers running in the server's process)."""


@dataclass(slots=True)
class RequestContext:
    """What admission knows about the request behind the current write."""

    user: UserInfo = IN_PROCESS_USER
    version: str = ""
    """The API version the client used ("" when unknown: the kind's storage version is assumed)."""
    warnings: list[str] = field(default_factory=list)


_CURRENT: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar("pykueue_request", default=None)


def current_request() -> RequestContext:
    return _CURRENT.get() or RequestContext()


def set_request(context: RequestContext) -> contextvars.Token[RequestContext | None]:
    return _CURRENT.set(context)


def reset_request(token: contextvars.Token[RequestContext | None]) -> None:
    _CURRENT.reset(token)


class _Bridged(greenlet):  # type: ignore[misc]  # greenlet ships no precise stubs for subclassing
    """A greenlet whose parent awaits whatever it is handed."""


async def run_suspendable(fn: Callable[[], T]) -> T:
    """Run ``fn()`` so that :func:`wait_for` inside it awaits on this task instead of blocking."""
    child = _Bridged(fn)
    child.gr_context = contextvars.copy_context()
    value: Any = child.switch()
    while not child.dead:
        try:
            result = await cast(Awaitable[Any], value)
        except BaseException as exc:  # handed back into the write, where it is raised
            value = child.throw(exc)
        else:
            value = child.switch(result)
    return cast(T, value)


def wait_for(awaitable: Coroutine[Any, Any, T]) -> T:
    """The result of ``awaitable``, from synchronous code (see the module docstring)."""
    current = greenlet.getcurrent()
    if isinstance(current, _Bridged):
        return cast(T, current.parent.switch(awaitable))
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, awaitable).result()

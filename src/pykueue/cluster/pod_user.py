"""Which user a ``process`` node runs pods as: never root unless the operator says so.

Whoever can create a Job can run a command on a ``process`` node. When the server runs as root,
that command must not: pods run as an unprivileged user (``nobody`` by default, or the node's
``user`` in ``--nodes``), and as root only with ``pykueue up --allow-root-pods``. When the server
is not root it cannot switch users, so pods run as the server's own user (its secrets are 0600
files in a 0700 data dir, but the pod can reach anything else that user can).
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

__all__ = ["DEFAULT_POD_USER", "RunAs", "resolve_run_as"]

DEFAULT_POD_USER = "nobody"


@dataclass(frozen=True, slots=True)
class RunAs:
    uid: int
    gid: int
    name: str

    @property
    def switches(self) -> bool:
        """True when the pod's process runs as another user than the server's."""
        return self.uid != os.geteuid()


def _lookup(user: str) -> RunAs:
    """``NAME``, ``UID`` or ``UID:GID`` (numbers need no passwd entry, as in a container image)."""
    name, _, group = user.partition(":")
    if name.isdigit():
        uid = int(name)
        try:
            entry: pwd.struct_passwd | None = pwd.getpwuid(uid)
        except KeyError:
            entry = None
        gid = entry.pw_gid if entry is not None else uid
        label = entry.pw_name if entry is not None else name
    else:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise ValueError(f"user {name!r} does not exist on this machine") from None
        uid, gid, label = entry.pw_uid, entry.pw_gid, entry.pw_name
    if group:
        if group.isdigit():
            gid = int(group)
        else:
            try:
                gid = grp.getgrnam(group).gr_gid
            except KeyError:
                raise ValueError(f"group {group!r} does not exist on this machine") from None
    return RunAs(uid, gid, label)


def resolve_run_as(user: str | None, *, allow_root: bool) -> RunAs:
    """The user pods of a node run as; ``ValueError`` (one line) when that would be root unasked."""
    if os.geteuid() != 0:
        me = RunAs(os.geteuid(), os.getegid(), pwd.getpwuid(os.geteuid()).pw_name)
        if user is not None and _lookup(user).uid != me.uid:
            raise ValueError(
                f"pods cannot run as {user!r}: pykueue runs as {me.name}, not root, so it cannot "
                "switch users (remove 'user' or run pykueue as root)"
            )
        return me
    chosen = _lookup(user if user is not None else ("0" if allow_root else DEFAULT_POD_USER))
    if chosen.uid == 0 and not allow_root:
        raise ValueError(
            "pods would run as root, with the power to read pykueue's secrets and change the "
            "machine: pass --allow-root-pods if that is really meant"
        )
    return chosen

"""The embedded server's bearer token: created once, kept with the data dir, never weak.

Every request but the health probes must carry this token, so it fails closed: a token file that
is empty, shorter than a generated token, holds characters a generated token never has, or cannot
be read (a crash mid-write in an old version, a hand edit, a wrong owner) is replaced by a new
random token, written atomically. The caller then writes a fresh kubeconfig, so kubectl follows.
"""

from __future__ import annotations

import logging
import re
import secrets
from pathlib import Path

from .private_files import write_atomically

__all__ = ["MIN_TOKEN_LENGTH", "load_or_create_token", "new_token"]

log = logging.getLogger(__name__)

MIN_TOKEN_LENGTH = 32
"""``secrets.token_urlsafe(32)`` gives 43 characters (256 bits); 32 characters is the floor we accept
from a file, about 190 bits."""
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]+")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def load_or_create_token(data_dir: Path | None) -> str:
    """The token kept in ``data_dir/token`` (made if missing or unusable); a fresh one when in memory."""
    if data_dir is None:
        return new_token()
    path = data_dir / "token"
    problem = ""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    except (OSError, UnicodeDecodeError) as exc:
        token, problem = "", f"cannot be read ({exc.__class__.__name__})"
    else:
        if len(token) < MIN_TOKEN_LENGTH:
            problem = f"holds {len(token)} characters, fewer than {MIN_TOKEN_LENGTH}"
        elif not _TOKEN_CHARS.fullmatch(token):
            problem = "holds characters a generated token never has"
        else:
            return token
    if problem:
        log.warning("the token file %s %s: writing a new token (kubeconfigs made before stop working)", path, problem)
    token = new_token()
    write_atomically(path, token.encode())
    return token

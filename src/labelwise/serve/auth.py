"""Who is asking: a token from ``Authorization: Bearer`` or the login cookie, checked against the session file.

Without a valid token every page and API call gets a 401 and nothing
else; the login page (``/login``) is the one exception.
"""

from __future__ import annotations

from fastapi import HTTPException, Request

from .tables import Annotator

__all__ = ["COOKIE", "AuthError", "check", "token_of"]

COOKIE = "labelwise_token"


class AuthError(HTTPException):
    """401 (no valid token) or 403 (not an admin)."""


def token_of(request: Request) -> str | None:
    """The token a request carries: its bearer token, else its login cookie."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE) or None


def check(annotator: Annotator | None, admin: bool = False) -> Annotator:
    """``annotator`` if present (and an admin when ``admin``), else :class:`AuthError`."""
    if annotator is None:
        raise AuthError(401, "a valid token is needed: send `Authorization: Bearer TOKEN` or log in at /login")
    if admin and not annotator.admin:
        raise AuthError(403, "this needs an admin token (`labelwise annotators add SESSION NAME --admin`)")
    return annotator

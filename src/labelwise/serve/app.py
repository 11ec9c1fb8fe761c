"""The web application of ``labelwise serve``: pages and a JSON API on one session file.

The session and its SQLite connection live on one thread
(:class:`~labelwise.serve.worker.SessionWorker`); every request that
touches them is queued there, so writes never contend, and an answer is
committed (with the answers that arrived with it) before its request is
answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from ..planning import kept_target
from ..session import Session
from ..store import StoreError
from .auth import COOKIE, AuthError, check, token_of
from .content import Content
from .desk import Desk, ServeError
from .pages import label_buttons, page, static_file
from .planner import PlanWatch
from .reports import EstimateHistory, export_table, progress
from .tables import Annotator, annotator_by_token, hash_token, is_active
from .worker import SessionWorker

__all__ = ["Server", "create_app"]

MAX_BODY = 16_384  # bytes: an answer is a few dozen
RECHECK = 2.0  # seconds a token found valid is trusted for pages (the API checks it again with its work)
_OPEN = ("/login", "/logout")  # the only paths served without a token


class Server:
    """An open session, its desk, content and estimate history, all used from one thread; the dashboard's plan
    is computed on another (:class:`~labelwise.serve.planner.PlanWatch`).

    Parameters
    ----------
    path : Path
        Session file.
    content : Path, optional
        Content file (:class:`~labelwise.serve.content.Content`).
    content_id : str
        Its id column.
    predictions : bool
        Show the systems' outputs to annotators.
    lease_seconds, overlap, until_half_width
        See :class:`~labelwise.serve.desk.Desk`.
    """

    def __init__(self, path: Path, content: Path | None = None, content_id: str = "item_id",
                 predictions: bool = False, lease_seconds: float = 600.0, overlap: float = 0.0,
                 until_half_width: float | None = None):
        self._worker = SessionWorker()
        try:
            self.desk = self._worker.submit(self._open, path, lease_seconds, overlap, until_half_width).result()
        except BaseException:
            self._worker.shutdown()
            raise
        self._worker.transaction = self.desk.writing
        try:
            self.content = Content(self.desk.session.pool, content, content_id, predictions)
        except BaseException:
            self.close()
            raise
        self.history = self._worker.submit(EstimateHistory, self.desk).result()  # reads the file: its thread
        self.plans = PlanWatch(path)  # the dashboard's plan: pilot runs, off the session thread
        self._known: dict[str, tuple[Annotator, float]] = {}  # token hash -> (annotator, when to look again)

    @staticmethod
    def _open(path: Path, lease_seconds: float, overlap: float, until_half_width: float | None) -> Desk:
        session = Session.open(path)
        try:
            session.store.set_wal(True)  # a commit is one fsync of the log; `close` folds it back
            return Desk(session, lease_seconds, overlap, until_half_width)
        except BaseException:
            session.close()
            raise

    async def run(self, fn: Callable, *args, group: bool = False) -> Any:
        """``fn(*args)`` on the session thread (``group``: it may share a commit with others)."""
        return await self._worker.run(fn, *args, group=group)

    async def annotator(self, request: Request) -> Annotator:
        """The active annotator whose token ``request`` carries, else :class:`AuthError`.

        A token seen in the last :data:`RECHECK` seconds is not looked up again; :meth:`run_as` checks
        on the session thread, with the work, that the annotator is still active.
        """
        token = token_of(request)
        key = None if token is None else hash_token(token)
        known = self._known.get(key)
        if known is None or known[1] < time.monotonic():
            found = check(None if token is None else await self.run(annotator_by_token,
                                                                     self.desk.session.store.conn, token))
            known = self._known[key] = (found, time.monotonic() + RECHECK)
        return known[0]

    async def run_as(self, who: Annotator, fn: Callable, *args, group: bool = False) -> Any:
        """:meth:`run` for ``who``, refused (401) if their token was revoked meanwhile."""
        def job():
            if not is_active(self.desk.session.store.conn, who.id):
                self._known.clear()
                check(None)
            return fn(*args)
        return await self.run(job, group=group)

    def close(self) -> None:
        """Fold the write-ahead log into the session file, close it and stop the session thread."""
        self._worker.submit(self.desk.session.store.set_wal, False).result()
        self._worker.submit(self.desk.session.close).result()
        self._worker.shutdown()


class LabelIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: int | str
    label: Any
    draw: int | None = Field(None, ge=0)
    idempotency_key: str = Field(min_length=1, max_length=200)


class UndoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    idempotency_key: str = Field(min_length=1, max_length=200)


class SkipIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: int | str


async def _anyone(request: Request) -> Annotator:
    """The annotator :class:`Gate` found."""
    return request.state.annotator


async def _admin(request: Request) -> Annotator:
    """The annotator :class:`Gate` found, if an admin (403 else)."""
    return check(request.state.annotator, admin=True)


Anyone = Annotated[Annotator, Depends(_anyone)]
Admin = Annotated[Annotator, Depends(_admin)]


def label_value(label: Any, n_classes: int) -> int:
    """``label`` as a class number, or a 422 :class:`ServeError` naming the allowed values."""
    allowed = ", ".join(map(str, range(n_classes))) if n_classes <= 10 else f"0..{n_classes - 1}"
    text = str(label).strip() if isinstance(label, (int, str)) and not isinstance(label, bool) else ""
    if not text.isdigit() or int(text) >= n_classes:
        raise ServeError(f"label: {label!r} is not an allowed value; allowed values are {allowed}")
    return int(text)


def create_app(server: Server) -> FastAPI:
    """The FastAPI application serving ``server``'s session (closed when the application stops)."""
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        server.close()

    app = FastAPI(title="labelwise", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Gate, server=server)
    desk, content, pool = server.desk, server.content, server.desk.session.pool
    _errors(app)

    @app.get("/login", response_class=HTMLResponse)
    async def login_page() -> str:
        return page("login.html", error="")

    @app.post("/login")
    async def login(request: Request) -> Response:
        token = parse_qs((await request.body()).decode(errors="replace")).get("token", [""])[0].strip()
        found = await server.run(annotator_by_token, desk.session.store.conn, token)
        if found is None:
            return HTMLResponse(page("login.html", error="That token is not valid."), status_code=401)
        response = RedirectResponse("/dashboard" if found.admin else "/", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=30 * 86400)
        return response

    @app.post("/logout")
    async def logout() -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    @app.get("/", response_class=HTMLResponse)
    async def label_page(who: Anyone) -> str:
        return page("label.html", {"buttons": label_buttons(pool.n_classes)}, name=who.name,
                    pool=pool.name, n_classes=pool.n_classes, admin="1" if who.admin else "")

    @app.get("/dashboard", response_class=HTMLResponse)
    async def dashboard_page(who: Admin) -> str:
        return page("dashboard.html", name=who.name, pool=pool.name, measure=desk.session.measure.name)

    @app.get("/static/{name}")
    async def static(name: str, who: Anyone) -> Response:
        found = static_file(name)
        if found is None:
            raise HTTPException(404, f"no static file {name!r}")
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "private, max-age=300"})

    @app.get("/image/{item_id}/{column}")
    async def image(item_id: str, column: str, who: Anyone) -> Response:
        path = await server.run_as(who, lambda: content.image_file(desk.position(item_id), column))
        if path is None:
            raise HTTPException(404, f"item {item_id!r} has no local image in column {column!r}")
        return FileResponse(path)

    @app.get("/api/next")
    async def next_items(who: Anyone, n: int = Query(5, ge=1, le=100)) -> dict:
        def hand() -> dict:
            given = desk.next(who, n)
            return {"items": [{"item_id": desk.item_id(h.item), "draw": h.draw, "role": h.role,
                               "html": content.html(h.item)} for h in given],
                    "n_labels": int(desk.session.n_labels), "pending": int(desk.session.pending_draws.size)}
        return await server.run_as(who, hand)

    @app.post("/api/labels")
    async def post_label(who: Anyone, body: LabelIn) -> dict:
        y = label_value(body.label, pool.n_classes)
        return await server.run_as(who, desk.answer, who, body.item_id, y, body.draw, body.idempotency_key, group=True)

    @app.post("/api/undo")
    async def undo(who: Anyone, body: UndoIn) -> dict:
        def retract() -> dict:
            done = desk.undo(who, body.idempotency_key)
            return {**done, "html": content.html(desk.position(done["item_id"]))}
        return await server.run_as(who, retract)

    @app.post("/api/skip")
    async def skip(who: Anyone, body: SkipIn) -> dict:
        return await server.run_as(who, desk.skip, who, body.item_id)

    @app.get("/api/estimate")
    async def estimate(who: Anyone) -> dict:
        return await server.run_as(who, server.history.current)

    @app.get("/api/dashboard")
    async def dashboard(who: Admin) -> dict:
        def report() -> dict:
            return {"estimate": server.history.current(), "history": server.history.points,
                    "progress": progress(desk), "plan": kept_target(desk.session)}
        found = await server.run_as(who, report)
        return {**found, "plan": await server.plans.plan(found["plan"], found["progress"]["n_labels"])}

    @app.get("/api/export")
    async def export(who: Admin) -> Response:
        frame = await server.run_as(who, export_table, desk)
        return Response(frame.to_csv(index=False), media_type="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{pool.name}-labels.csv"'})

    return app


def _reply(request: Request, status: int, message: str) -> Response:
    """An error: one line of JSON, or the login page with the message for a page asked without a token."""
    if request.url.path.startswith("/api/") or status != 401:
        return JSONResponse({"detail": message}, status_code=status)
    return HTMLResponse(page("login.html", error=message), status_code=401)


def _errors(app: FastAPI) -> None:
    """One-line JSON errors for the API, a bare page elsewhere; never a traceback."""
    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _reply(request, exc.status_code, str(exc.detail))

    @app.exception_handler(ServeError)
    async def serve_error(request: Request, exc: ServeError) -> Response:
        return _reply(request, exc.status, str(exc))

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> Response:
        return _reply(request, 503, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        return _reply(request, 422, f"{where}: {first['msg']}")


class Gate:
    """Before anything else: a 401 without a valid token (except on the login page), a 413 for big bodies.

    The annotator found is left in the request's state for the routes.
    """

    def __init__(self, app, server: Server):
        self.app, self.server = app, server

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":  # none served
            return await send({"type": "websocket.close", "code": 1008})
        if scope["type"] != "http" or scope["path"] in _OPEN:
            return await self.app(scope, receive, send)
        request = Request(scope)
        try:
            who = await self.server.annotator(request)
        except AuthError as exc:
            return await _reply(request, exc.status_code, str(exc.detail))(scope, receive, send)
        except StoreError as exc:
            return await _reply(request, 503, str(exc))(scope, receive, send)
        length = request.headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            return await _reply(request, 413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
        scope.setdefault("state", {})["annotator"] = who
        return await self.app(scope, receive, send)

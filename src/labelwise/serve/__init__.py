"""``labelwise serve``: a keyboard-first annotation web app on a session file.

:class:`~labelwise.serve.app.Server` opens the session on one thread;
:func:`~labelwise.serve.app.create_app` builds the FastAPI application
(pages, dashboard, JSON API).  The server's own tables (annotators,
leases, answers, retractions) live in the session file
(:mod:`labelwise.serve.tables`).  This package imports nothing on its own,
so the command line loads the web stack only for ``labelwise serve``.
"""

"""Opening a session file a second time in one process must not drop the locks of the connection already open.

POSIX advisory locks belong to the process and file: closing *any* descriptor of the file releases them all.
``labelwise serve`` holds the session in WAL mode, where every connection keeps a shared lock; ``Store.open``
used to read the file's header through a descriptor of its own and close it, which released the server's lock.
Another process (``labelwise next``) then took the file for its own, checkpointed and deleted the write-ahead
log under the server, and the server's next writes left the file "malformed" (SQLite, "How To Corrupt An SQLite
Database File", section 2.2).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import numpy as np

from labelwise.measures import make_measure
from labelwise.pool import Pool
from labelwise.session import Session
from labelwise.store import Store

_OTHER_PROCESS = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("INSERT OR REPLACE INTO cache VALUES ('other process', x'00')")
conn.close()  # the last connection to the file closes: SQLite checkpoints and deletes the log
"""


def test_a_second_open_keeps_the_first_connections_lock(tmp_path):
    path = tmp_path / "s.lw"
    p = np.linspace(0.01, 0.99, 200)
    pool = Pool.from_arrays(np.arange(200), preds=(p > 0.5).astype(int), scores=p, name="toy")
    Session(pool, make_measure("f1", pool), "passive", seed=0, path=path).close()
    server = Store.open(path)  # as `labelwise serve` holds it
    assert server.set_wal(True)
    server.put_cache("server", b"1")
    with closing(Store.open(path)):  # a second open in the same process (the serve command, a plan)
        pass
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path)], check=True, timeout=60)
    assert Path(f"{path}-wal").exists()  # the server still has the file open: its log stays
    server.put_cache("server", b"2")
    server.set_wal(False)
    server.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert dict(conn.execute("SELECT key, data FROM cache WHERE key IN ('server', 'other process')")) == {
            "server": b"2", "other process": b"\x00"}

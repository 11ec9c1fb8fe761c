"""``labelwise serve`` on a port another program holds: one ``error:`` line naming the port, before the session
and its content are loaded."""

import socket

import numpy as np
import pandas as pd


def test_a_busy_port_is_one_error_line(tmp_path, ok, fails):
    pool = tmp_path / "pool.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"item_id": np.arange(50), "pred": rng.integers(0, 2, 50), "score": rng.uniform(size=50)}).to_csv(
        pool, index=False)
    ok("init", pool, tmp_path / "s.lw", "--design", "passive")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        line = fails("serve", tmp_path / "s.lw", "--port", port)
    assert line.startswith(f"error: --port {port}: cannot listen on 127.0.0.1:{port} (")
    assert line.endswith("stop the program using it (another `labelwise serve`?) or choose another --port")


def test_a_host_that_does_not_resolve_is_one_error_line(tmp_path, ok, fails):
    pool = tmp_path / "pool.csv"
    pd.DataFrame({"item_id": [1, 2, 3], "pred": [0, 1, 0]}).to_csv(pool, index=False)
    ok("init", pool, tmp_path / "s.lw", "--design", "passive")
    line = fails("serve", tmp_path / "s.lw", "--host", "no-such-host.invalid")
    assert line.startswith("error: --host 'no-such-host.invalid': not an address of this machine (")

"""A web dashboard over the marts: `platform-sync dashboard` serves it on loopback.

Built with Dash (Flask serving, Plotly charts, plotly.js inside the wheel: it works offline). It reads the
pipeline's destination the way `platform-sync models` does: DuckDB's file through a private snapshot
(`dashboard.warehouse`), PostgreSQL through dlt's destination credentials.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Mapping

from dashboard.app import create_app, render_page
from dashboard.warehouse import DuckDbSnapshot, SqlClientWarehouse, WarehouseUnavailable, for_pipeline

__all__ = [
    "DuckDbSnapshot",
    "PortInUse",
    "SqlClientWarehouse",
    "WarehouseUnavailable",
    "create_app",
    "for_pipeline",
    "render_page",
    "serve",
]


def serve(
    pipeline: object,
    host: str = "127.0.0.1",
    port: int = 8050,
    account_schemas: Mapping[str, str] | None = None,
) -> None:
    """Serve the dashboard over `pipeline`'s destination until interrupted. `account_schemas`: each
    configured account's raw dataset by its name (docs/accounts.md); none for the single-account setup.

    The port is taken first (`PortInUse` before anything else is said or opened); the app is served by
    werkzeug's threaded WSGI server as Dash's own `run` would, without its development banner and
    warning (the dashboard listens on loopback for one person: no production server is needed)."""
    from werkzeug.serving import make_server

    listener = _listen(host, port)
    warehouse = for_pipeline(pipeline)
    raw_schema = str(getattr(pipeline, "dataset_name", "platform_raw"))
    app = create_app(warehouse, raw_schema, dict(account_schemas or {}))
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    http = make_server(host, port, app.server, threaded=True, fd=listener.fileno())
    print(f"dashboard on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        http.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        http.server_close()
        if isinstance(warehouse, DuckDbSnapshot):
            warehouse.close()


class PortInUse(Exception):
    """The dashboard's address is taken (another dashboard, or another program)."""


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or `PortInUse` naming what to do."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise PortInUse(
            f"port {port} on {host} is in use ({exc.strerror}): another dashboard may be running; "
            f"stop it, or choose another port with --port."
        ) from exc
    listener.listen(128)
    listener.set_inheritable(True)
    return listener

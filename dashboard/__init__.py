"""A web dashboard over the marts: `platform-sync dashboard` serves it on loopback.

Built with Dash (Flask serving, Plotly charts, plotly.js inside the wheel: it works offline). It reads the
pipeline's destination the way `platform-sync models` does: DuckDB's file through a private snapshot
(`dashboard.warehouse`), PostgreSQL through dlt's destination credentials.
"""

from __future__ import annotations

from dashboard.app import create_app, render_page
from dashboard.warehouse import DuckDbSnapshot, SqlClientWarehouse, WarehouseUnavailable, for_pipeline

__all__ = [
    "DuckDbSnapshot",
    "SqlClientWarehouse",
    "WarehouseUnavailable",
    "create_app",
    "for_pipeline",
    "render_page",
    "serve",
]


def serve(pipeline: object, host: str = "127.0.0.1", port: int = 8050) -> None:
    """Serve the dashboard over `pipeline`'s destination until interrupted."""
    warehouse = for_pipeline(pipeline)
    raw_schema = str(getattr(pipeline, "dataset_name", "platform_raw"))
    app = create_app(warehouse, raw_schema)
    print(f"dashboard on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        app.run(host=host, port=port, debug=False)
    finally:
        if isinstance(warehouse, DuckDbSnapshot):
            warehouse.close()

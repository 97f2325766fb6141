"""Commands whose libraries are an extra of the package (`pip install 'platform-sync[<extra>]'`): a
missing extra is one line naming it (exit 2), not an ImportError's traceback."""

from __future__ import annotations

import importlib.util

from sources.platform_client.errors import ConfigurationError

# extra -> a module it installs
EXTRA_MODULES = {"dashboard": "dash", "postgres": "psycopg2", "dagster": "dagster", "airflow": "airflow"}


def require_extra(extra: str, needed_by: str) -> None:
    """Refuse (ConfigurationError: exit 2) when `extra` is not installed, saying how to install it."""
    if importlib.util.find_spec(EXTRA_MODULES[extra]) is None:
        raise ConfigurationError(
            f"{needed_by} needs the {extra} extra, which is not installed: "
            f"pip install 'platform-sync[{extra}]' (or `make demo` / `make install` in a checkout)"
        )

"""Checks made before anything is requested, so that a scheduler sees a configuration error (exit 2)
rather than a failed run: the destination's name, its installed extra and its credentials."""

from __future__ import annotations

import difflib
import tempfile

import dlt
from dlt.common.configuration.exceptions import ConfigFieldMissingException
from dlt.common.destination import Destination, DestinationReference
from dlt.common.destination.exceptions import DestinationException
from dlt.common.exceptions import MissingDependencyException

from sources.platform_client.errors import ConfigurationError

DLT_PREFIX = "dlt.destinations."


def known_destinations() -> list[str]:
    """The names dlt accepts for `--destination` (its own destinations, by their short names)."""
    names = [name.removeprefix(DLT_PREFIX) for name in DestinationReference.DESTINATIONS]
    return sorted(name for name in names if name not in ("destination",))


def check_destination_name(name: str) -> None:
    """Refuse a destination dlt does not know, naming the close ones (no traceback)."""
    try:
        Destination.from_reference(name)
    except DestinationException as exc:
        known = known_destinations()
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise ConfigurationError(
            f"unknown destination {name!r}; {hint}the destinations are: {', '.join(known)}"
        ) from exc


def check_destination_config(pipeline_name: str, destination: str, dataset_name: str) -> None:
    """Resolve the destination's configuration (credentials, installed client library) without
    connecting: what is missing is named, with where to set it.

    Checked on a pipeline of the same name in a throwaway working folder, before the command opens its
    own: dlt writes the destination into a working folder's state as soon as a pipeline is opened with
    it, and a refused command must leave the real one as it was."""
    with tempfile.TemporaryDirectory(prefix="platform-sync-preflight-") as scratch:
        probe = dlt.pipeline(
            pipeline_name=pipeline_name,
            destination=destination,
            dataset_name=dataset_name,
            pipelines_dir=scratch,
        )
        _check_client(probe)


def _check_client(pipeline: dlt.Pipeline) -> None:
    name = pipeline.destination.destination_name
    try:
        pipeline.destination_client()
    except MissingDependencyException as exc:
        ours = " (or pip install 'platform-sync[postgres]', with dbt's adapter)" if name == "postgres" else ""
        raise ConfigurationError(
            f"the {name} destination's client library is not installed: "
            f"pip install {' '.join(repr(d) for d in exc.dependencies)}{ours}"
        ) from exc
    except ConfigFieldMissingException as exc:
        fields = ", ".join(exc.fields)
        example = " (postgresql://user:password@host:5432/database)" if name == "postgres" else ""
        raise ConfigurationError(
            f"the {name} destination is missing {fields}: set [destination.{name}] credentials in "
            f".dlt/secrets.toml, or DESTINATION__{name.upper()}__CREDENTIALS{example}."
        ) from exc

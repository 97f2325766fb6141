"""Drift: the sandbox sends records that depart from the spec, as real APIs do, and says which.

With `--drift RATE` (or `POST /sandbox/drift {"rate": R, "seed": S}`), a share RATE of the records of
every read operation departs from its spec shape (`sandbox/spec_shapes/`) in one to three places, at
any depth. The kinds: `null` and `missing` (a field the spec does not mark nullable), `unlisted_value`
(an enum value the spec does not list), `unlisted_field` (a key the spec does not list), `converted`
(another JSON type that converts without loss: `"12.5"`, `1`, `"true"`, a zoneless or date-only
timestamp) and `unconvertible` (`"n/a"` for a number, `""` for a timestamp, `"maybe"` for a boolean).
Keys and sale references never depart. Departures are made as an answer is serialized, after filtering
and paging on the true values; `GET /sandbox/departures` lists every departure served, one row each:
`{"operation", "record_id", "path", "kind", "value"}`.
"""

from sandbox.drift.injector import DriftInjector, DriftSettings
from sandbox.drift.operations import TARGETS
from sandbox.drift.sites import KINDS

__all__ = ["KINDS", "TARGETS", "DriftInjector", "DriftSettings"]

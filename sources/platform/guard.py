"""Running one resource's reader so that what goes wrong stays with that resource: a missing scope
skips it, an error after retries fails it, and either way the others keep syncing."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import dlt

from sources.platform.fastpath.batches import Batch
from sources.platform.models import RecordValidationError
from sources.platform.resources.context import SourceContext, scope_message
from sources.platform.resources.stream import Stream
from sources.platform_client.errors import MissingScopeError, PlatformError


def guarded(ctx: SourceContext, stream: Stream, read: Callable[[], Iterator[Batch]]) -> Iterator[Batch]:
    """Run one reader so that its failure is reported and the other resources keep syncing."""
    try:
        if missing := ctx.missing_scopes(stream):
            ctx.report.skip(stream.name, scope_message(stream, missing))
            keep_replaced_table(stream)
            return
        yield from read()
    except MissingScopeError as exc:
        ctx.report.skip(stream.name, str(exc))
        keep_replaced_table(stream)
    except (PlatformError, RecordValidationError) as exc:
        ctx.report.fail(stream.name, str(exc))
        keep_replaced_table(stream)
    finally:
        # read or not, `fiscal_documents` no longer waits for it (`financial_followups.py`)
        if stream.name == "sales":
            ctx.documents_due.close(())
        if stream.sale_ids_at:
            ctx.commit_pending_sales()
            ctx.sale_ids.finish(stream.name)


def keep_replaced_table(stream: Stream) -> None:
    """dlt empties the table of a `replace` resource that yielded nothing; a resource that was not read
    (failed, skipped, not due) must keep its table: for this extract its rows are not loaded at all.
    (The `replace` readers yield all or nothing: see `read_product_children`.)"""
    if stream.write_disposition == "replace":
        dlt.current.source().resources[stream.name].apply_hints(write_disposition="skip")

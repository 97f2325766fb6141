"""A client of the platform's API that knows HTTP and the spec's conventions only: no dlt, no Arrow.

The source (`sources/platform/`), the write commands (`pipelines/carts.py`, `attendees_import.py`) and
anyone scripting the API use it the same way:

    with PlatformClient("https://api.example.com", token) as client:
        for page in client.paginate("list_transfers"):
            ...

| module | what it knows |
|---|---|
| `client.py` | `PlatformClient`: a request or a paged walk of any operation, with auth, retries, limits |
| `operations.py` | the spec's operations: method, path, scopes, rate limit, paged or not |
| `auth.py` | the bearer token and the token exchange |
| `paging.py` | the paged envelope and the walk over pages (first page 0 or 1) |
| `retry.py`, `outcomes.py` | which answers are retried, how long to wait, what each try produced |
| `ratelimit.py` | per-operation request budgets |
| `errors.py` | one exception per way a request fails, each saying what to do |
| `redaction.py` | secrets removed from URLs, messages and bodies |
| `windows.py` | the API's timestamp form and date windows |
"""

from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import PlatformError

__all__ = ["PlatformClient", "PlatformError"]

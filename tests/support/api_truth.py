"""What the sandbox serves, read straight from its API with plain httpx: the truth the warehouse must hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

FAR_PAST = "2000-01-01T00:00:00Z"
FAR_FUTURE = "2100-01-01T00:00:00Z"


class ApiTruth:
    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def get(self, path: str, **params: Any) -> Any:
        for _ in range(50):
            response = self.http.get(path, params=params)
            if response.status_code != 429:
                response.raise_for_status()
                return response.json()
            import time

            time.sleep(float(response.headers.get("Retry-After", "1")))
        raise AssertionError(f"{path} stayed rate limited")

    def pages(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        page = 1
        while True:
            envelope = self.get(path, page=page, itemsPerPage=100, **params)
            yield from envelope["items"]
            if page >= envelope["pages"]:
                return
            page += 1

    def ids(self, path: str, **params: Any) -> set[str]:
        return {str(item["id"]) for item in self.pages(path, **params)}

    def subscriptions(self) -> list[dict[str, Any]]:
        return list(
            self.pages("/store/v1/subscriptions", startDate=FAR_PAST, endDate=FAR_FUTURE, filterBy="creation")
        )

    def fiscal_documents(self) -> list[dict[str, Any]]:
        return list(
            self.pages("/store/v1/financial/buyer/fiscal-documents", startDate=FAR_PAST, endDate=FAR_FUTURE)
        )

    def attendees(self, event_ids: list[str]) -> list[dict[str, Any]]:
        return [a for e in event_ids for a in self.pages(f"/events/v1/attendance-list/by-event/{e}")]

    def reachable_sales(self, event_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Every sale the pipeline can discover, with the closure over order bumps' main sales."""
        frontier = {s["firstInvoiceId"] for s in self.subscriptions()}
        frontier |= {d["sale"]["id"] for d in self.fiscal_documents()}
        frontier |= {a["invoiceId"] for a in self.attendees(event_ids) if a.get("invoiceId")}
        sales: dict[str, dict[str, Any]] = {}
        while frontier:
            sale_id = str(frontier.pop())
            if sale_id in sales:
                continue
            response = self.http.get(f"/store/v1/sales/{sale_id}")
            while response.status_code == 429:
                import time

                time.sleep(float(response.headers.get("Retry-After", "1")))
                response = self.http.get(f"/store/v1/sales/{sale_id}")
            if response.status_code == 404:
                continue
            sale = response.raise_for_status().json()
            sales[sale_id] = sale
            main = (sale.get("orderBump") or {}).get("mainSaleId")
            if main is not None and str(main) not in sales:
                frontier.add(str(main))
        return sales

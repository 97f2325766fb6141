"""Sandbox-only routes (contracts part 2) and the token exchange (spec 4.1).

None of these is rate limited or faulted; the token exchange is counted in the stats as
`token_exchange` like an API operation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sandbox.drift import DriftSettings
from sandbox.errors import ApiError, JSONResponse, error_response, validation_error
from sandbox.faults import FaultSpec
from sandbox.params import BodyCheck, parse_json_body
from sandbox.state import SandboxState

MAX_ADVANCE_SECONDS = 10 * 366 * 86400  # ten years per call keeps the clock far from datetime's limits


def iso(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z`, the contract's timestamp form."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


async def _json_body(request: Request) -> dict[str, Any]:
    return parse_json_body(await request.body())


def api_routes(state: SandboxState) -> list[Route]:
    """`/sandbox/*` on the API address: advance, catalog, faults, stats, drift and its departures."""

    async def advance(request: Request) -> Response:
        check = BodyCheck()
        seconds = check.field(await _json_body(request), "seconds", "number", required=True)
        if seconds is not None and not 0 <= seconds <= MAX_ADVANCE_SECONDS:
            check.fail("seconds", f"must be between 0 and {MAX_ADVANCE_SECONDS}")
        check.done()
        before = state.world.clock
        state.world.advance(float(seconds))
        announce_moves(state, before)
        return JSONResponse({"clock": iso(state.world.clock)})

    async def catalog(request: Request) -> Response:
        body = dict(state.world.catalog())
        body.setdefault("clock", iso(state.world.clock))
        return JSONResponse(body)

    def faults_body() -> dict[str, Any]:
        spec = state.faults.spec
        return {"spec": spec.format(), "faults": spec.as_dict(), "requests": state.faults.requests}

    async def get_faults(request: Request) -> Response:
        return JSONResponse(faults_body())

    async def set_faults(request: Request) -> Response:
        check = BodyCheck()
        text = check.field(await _json_body(request), "spec", "string")
        check.done()
        try:
            state.faults.set(FaultSpec.parse(text))
        except ValueError as exc:
            raise validation_error([{"field": "spec", "message": str(exc)}]) from None
        return JSONResponse(faults_body())

    async def stats(request: Request) -> Response:
        return JSONResponse(state.stats.snapshot())

    async def get_drift(request: Request) -> Response:
        return JSONResponse(state.drift.settings.as_dict())

    async def set_drift(request: Request) -> Response:
        state.drift.configure(_drift_settings(await _json_body(request), state.drift.settings))
        return JSONResponse(state.drift.settings.as_dict())

    async def departures(request: Request) -> Response:
        return JSONResponse(state.drift.departures())

    async def reset_departures(request: Request) -> Response:
        state.drift.reset()
        return JSONResponse(state.drift.departures())

    async def reset_stats(request: Request) -> Response:
        state.stats.reset()
        return JSONResponse(state.stats.snapshot())

    async def get_webhooks(request: Request) -> Response:
        return JSONResponse(state.webhooks.snapshot())

    async def set_webhooks(request: Request) -> Response:
        check = BodyCheck()
        body = await _json_body(request)
        url = check.field(body, "url", "string")
        secret = check.field(body, "secret", "string")
        if url and not url.startswith(("http://", "https://")):
            check.fail("url", "must be an http(s) URL")
        if url and not secret:
            check.fail("secret", "required with a url: every delivery is signed")
        check.done()
        state.webhooks.configure(url or None, secret or "", iso(state.world.clock))
        return JSONResponse(state.webhooks.snapshot())

    async def carts(request: Request) -> Response:
        return JSONResponse(list(getattr(state.world, "created_carts", lambda: [])()))

    return [
        Route("/sandbox/webhooks", get_webhooks, methods=["GET"]),
        Route("/sandbox/webhooks", set_webhooks, methods=["POST"]),
        Route("/sandbox/carts", carts, methods=["GET"]),
        Route("/sandbox/advance", advance, methods=["POST"]),
        Route("/sandbox/catalog", catalog, methods=["GET"]),
        Route("/sandbox/faults", get_faults, methods=["GET"]),
        Route("/sandbox/faults", set_faults, methods=["POST"]),
        Route("/sandbox/stats", stats, methods=["GET"]),
        Route("/sandbox/stats/reset", reset_stats, methods=["POST"]),
        Route("/sandbox/drift", get_drift, methods=["GET"]),
        Route("/sandbox/drift", set_drift, methods=["POST"]),
        Route("/sandbox/departures", departures, methods=["GET"]),
        Route("/sandbox/departures/reset", reset_departures, methods=["POST"]),
    ]


def announce_moves(state: SandboxState, before: datetime) -> None:
    """Queue a webhook delivery for every move of the world since `before` (when a URL is set)."""
    moves = getattr(state.world, "moves", None)  # not part of the World Protocol
    if state.webhooks.url and moves is not None:
        state.webhooks.announce([move.envelope() for move in moves(before, state.world.clock)])


def _drift_settings(body: dict[str, Any], current: DriftSettings) -> DriftSettings:
    """`{"rate": R, "seed": S, "rates": {operation: R}}`; an absent key keeps its current value."""
    check = BodyCheck()
    rate = check.field(body, "rate", "number")
    seed = check.field(body, "seed", "integer")
    rates = check.field(body, "rates", "object")
    check.done()
    try:
        return DriftSettings(
            rate=current.rate if rate is None else float(rate),
            seed=current.seed if seed is None else seed,
            rates=current.rates if rates is None else {str(k): float(v) for k, v in rates.items()},
        )
    except (TypeError, ValueError) as exc:
        raise validation_error([{"field": "rate", "message": str(exc)}]) from None


def auth_routes(state: SandboxState) -> list[Route]:
    """The auth address: the token exchange and the sandbox's stand-in for the user's consent."""

    async def authorize(request: Request) -> Response:
        body = await _json_body(request)
        check = BodyCheck()
        client_id = check.field(body, "client_id", "string")
        scopes = check.field(body, "scopes", "array")
        if scopes is not None and not all(isinstance(s, str) for s in scopes):
            check.fail("scopes", "must be an array of strings")
        check.done()
        code = state.auth.mint_code(client_id or "sandbox-demo", scopes)
        return JSONResponse({"code": code})

    async def token(request: Request) -> Response:
        try:
            raw = await request.body()
            # The spec says JSON; OAuth clients often send a form, which costs nothing to accept.
            if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                body: dict[str, Any] = dict(parse_qsl(raw.decode("utf-8", "replace")))
            else:
                body = parse_json_body(raw)
            response: Response = JSONResponse(state.auth.exchange(body))
        except ApiError as exc:
            response = error_response(exc)
        state.stats.record("token_exchange", response.status_code)
        return response

    return [
        Route("/sandbox/authorize", authorize, methods=["POST"]),
        Route("/oauth/token", token, methods=["POST"]),
    ]

"""The sandbox's two ASGI apps: the API on `base_url` and the token exchange on `auth_url`.

`create_app(world, options)` takes any object that implements `sandbox.world.api.World`. Each of the
API operations is an `Operation`, a raw ASGI endpoint that runs the same gate for every call:
fault draw, bearer token, scope, rate limit, parameters, world, orjson. Both apps share one
`SandboxState` and run in one event loop, so no locks are needed.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from sandbox.auth import AuthStore, Identity
from sandbox.drift import DriftInjector, DriftSettings
from sandbox.errors import ERROR_CODES, ApiError, JSONResponse, error_response
from sandbox.faults import (
    CYCLE_KEY,
    MALFORMED_BODY,
    NO_FAULT,
    STALL_SECONDS,
    Fault,
    FaultInjector,
    FaultSpec,
    close_connection,
    loosen_envelope,
    poison_payload,
    render_poisoned,
)
from sandbox.moving import newest_first
from sandbox.operation import Call, OperationDef
from sandbox.params import Query, parse_json_body
from sandbox.ratelimit import Decision, RateLimiter
from sandbox.routes import OPERATIONS, control
from sandbox.state import SandboxOptions, SandboxState
from sandbox.webhook_sender import WebhookSender
from sandbox.world.api import World, WorldError

log = logging.getLogger("sandbox")


class Operation:
    """The ASGI endpoint of one API operation."""

    def __init__(self, state: SandboxState, definition: OperationDef):
        self.state = state
        self.d = definition

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # With `latency_ms` on, the time-weighted number of requests in flight is measured (bench/).
        # With `timeline=1`, when each operation's first request arrived and its last answer left.
        tracked = self.state.faults.spec.latency_ms > 0
        timed = bool(self.state.faults.spec.timeline)
        if tracked:
            self.state.stats.enter(time.monotonic())
        if timed:
            self.state.stats.arrived(self.d.name, time.monotonic())
        try:
            await self._serve(scope, receive, send)
        finally:
            if tracked:
                self.state.stats.leave(time.monotonic())
            if timed:
                self.state.stats.answered(self.d.name, time.monotonic())

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        state, name = self.state, self.d.name
        fault = state.faults.next()
        if fault is not NO_FAULT:
            await self._prelude(scope, fault)
        # Without uvicorn's cycle (an in-process ASGI client) drop and truncate degrade to normal answers.
        if fault.kind == "drop" and await close_connection(scope):
            state.stats.record(name, "dropped")
            return
        try:
            response = await self._answer(Request(scope, receive), fault)
        except ClientDisconnect:  # the client went away before its body arrived: nothing to answer
            state.stats.record(name, "disconnected")
            return
        if fault.kind == "truncate" and await _send_truncated(response, scope, send):
            state.stats.record(name, response.status_code)
            return
        await response(scope, receive, send)
        state.stats.record(name, response.status_code)

    async def _prelude(self, scope: Scope, fault: Fault) -> None:
        """Count the fault, wait if slow, revoke the token if this is the Nth request."""
        stats = self.state.stats
        if fault.kind:
            stats.record_fault(fault.kind)
        if fault.delay:
            stats.record_fault("slow")
            await asyncio.sleep(fault.delay)
        if fault.latency:
            await asyncio.sleep(fault.latency)
        if fault.revoke and self.state.auth.revoke(Request(scope).headers.get("authorization")):
            stats.record_fault("revoke")

    async def _answer(self, request: Request, fault: Fault) -> Response:
        if fault.kind == "error":
            return error_response(ApiError(fault.status, f"injected fault: {ERROR_CODES[fault.status]}"))
        decision: Decision | None = None
        try:
            token = self.state.auth.authenticate(request.headers.get("authorization"))
            self.state.auth.require(token, self.d.scopes)
            if fault.foreign:
                self.state.stats.record_fault("foreign_429")
                raise foreign_rate_limited(self.state.limiter, self.d.name)
            if self.d.name in self.state.faults.spec.stall:
                self.state.stats.record_fault("stall")
                raise stalled(self.d.name)
            if self.state.limiter.enabled:
                decision = self.state.limiter.check(token.access_token, self.d.name)
                if not decision.allowed:
                    raise ApiError(429, f"rate limit exceeded for {self.d.name}; retry later")
            body = parse_json_body(await request.body()) if self.d.has_body else None
            call = Call(request.path_params, Query(request.query_params), body)
            payload = self.d.handler(self.state.world, call)
            if self.d.name in self.state.faults.spec.newest_first:
                self.state.stats.record_fault("newest_first")
                payload = newest_first(self.d, self.state.world, call, payload)
            elif self.state.faults.spec.reorder:
                spec, moved = self.state.faults.spec, len(self.state.moving.moved)
                payload = self.state.moving.serve(spec, self.d, self.state.world, call, payload)
                if len(self.state.moving.moved) > moved:
                    self.state.stats.record_fault("reorder")
            if self.state.drift.active:  # after filtering and paging, which use the true values
                payload = self.state.drift.apply(self.d.name, payload, call.path)
            response: Response = self._render(payload)
        except ApiError as exc:
            response = error_response(exc)
        except WorldError as exc:
            response = error_response(from_world_error(exc))
        except ClientDisconnect:
            raise
        except Exception:  # a bug in the world or here: still the error body, and a log line
            log.exception("operation %s failed", self.d.name)
            response = error_response(ApiError(500, "internal server error"))
        if decision is not None:
            response.headers.update(decision.headers())
        return response

    def _render(self, payload: Any) -> Response:
        """The answer's body; the opt-in `poison`, `malformed` and `loose_envelope` faults
        (`sandbox/faults.py`) apply here."""
        spec = self.state.faults.spec
        if self.d.name in spec.loose_envelope and isinstance(payload, dict) and "pages" in payload:
            self.state.stats.record_fault("loose_envelope")
            payload = loosen_envelope(payload, self.d.path)
        if self.d.name in spec.malformed:
            self.state.stats.record_fault("malformed")
            return Response(MALFORMED_BODY, status_code=self.d.status, media_type="application/json")
        if spec.poison and (poisoned := poison_payload(payload, spec.poison)) is not None:
            self.state.stats.record_fault("poison")
            body = render_poisoned(poisoned)
            return Response(body, status_code=self.d.status, media_type="application/json")
        return JSONResponse(payload, status_code=self.d.status)


def foreign_rate_limited(limiter: RateLimiter, operation: str) -> ApiError:
    """The `foreign_429` fault: the budget spent by another application of the account. `Retry-After` is
    the time one request takes to come back at the operation's rate (whole seconds, at least 1)."""
    limit = limiter.limit_of(operation)
    seconds = max(1, math.ceil(60.0 / (limit * limiter.time_scale)))
    headers = {"Retry-After": str(seconds), "X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": "0"}
    return ApiError(429, f"rate limit exceeded for {operation}; retry later", headers=headers)


def stalled(operation: str) -> ApiError:
    """The `stall` fault: the operation closed for an hour (`Retry-After: 3600`)."""
    headers = {"Retry-After": str(STALL_SECONDS), "X-RateLimit-Remaining": "0"}
    return ApiError(429, f"rate limit exceeded for {operation}; retry in an hour", headers=headers)


def from_world_error(exc: WorldError) -> ApiError:
    # The world's code may be its own; the contract's code follows from the status.
    code = exc.code if exc.code in ERROR_CODES.values() else None
    return ApiError(exc.status, exc.message, code=code, details=exc.details)


async def _send_truncated(response: Response, scope: Scope, send: Send) -> bool:
    """Headers promising the whole body, half of it, then a closed connection."""
    if CYCLE_KEY not in scope:
        return False
    body = bytes(response.body)
    headers = [(k, v) for k, v in response.raw_headers if k != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
    return await close_connection(scope)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "no such path" if exc.status_code == 404 else exc.detail
    if exc.status_code == 405:
        message = f"method {request.method} not allowed on {request.url.path}"
    return error_response(ApiError(exc.status_code, message, headers=dict(exc.headers or {})))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _world_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WorldError)
    return error_response(from_world_error(exc))


async def _server_error(request: Request, exc: Exception) -> Response:
    return error_response(ApiError(500, "internal server error"))


def http_date(clock: datetime) -> bytes:
    """An HTTP `Date` value (RFC 9110 IMF-fixdate, whole seconds rounded down) of an aware datetime."""
    return format_datetime(clock.astimezone(UTC).replace(microsecond=0), usegmt=True).encode()


class KeepCycle:
    """Outermost ASGI layer: remembers uvicorn's request cycle so a fault can close the socket, and
    dates every answer by the world's clock (uvicorn's own `Date` header is off, see server.py)."""

    def __init__(self, app: Starlette, world: World):
        self.app = app
        self.world = world

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cycle = getattr(send, "__self__", None)
        if hasattr(cycle, "transport"):
            scope[CYCLE_KEY] = cycle

        async def dated_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"date"]
                headers.append((b"date", http_date(self.world.clock)))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, dated_send)


def _starlette(routes: list[Route]) -> Starlette:
    app = Starlette(
        routes=routes,
        exception_handlers={
            HTTPException: _http_error,
            ApiError: _api_error,
            WorldError: _world_error,
            Exception: _server_error,
        },
    )
    # A path with a trailing slash (`/sales/0%2F` decodes to `/sales/0/`) is a path the API does not
    # have: a JSON 404 as for any other, not Starlette's bodiless 307 to the path without it
    app.router.redirect_slashes = False
    return app


@dataclass
class SandboxApps:
    api: KeepCycle
    auth: KeepCycle
    state: SandboxState


def owner_id(world: World) -> str | None:
    """The seller's user id if the world exposes one (SyntheticWorld's `owner_id`, the events' userId).

    Not part of the World Protocol: without it the token's user id is derived from the seed alone.
    """
    value = getattr(world, "owner_id", None)
    return value if isinstance(value, str) else None


def drift_settings(options: SandboxOptions) -> DriftSettings:
    """The drift the sandbox starts with (ValueError if the rate is not in [0, 1])."""
    seed = options.seed if options.drift_seed is None else options.drift_seed
    return DriftSettings(rate=options.drift, seed=seed)


def create_app(world: World, options: SandboxOptions | None = None) -> SandboxApps:
    """Both ASGI apps over one world; `options.faults` is a fault spec string (ValueError if bad)."""
    options = options or SandboxOptions()
    state = SandboxState(
        world=world,
        options=options,
        auth=AuthStore(Identity.from_seed(options.seed, owner_id(world)), clock=lambda: world.clock),
        limiter=RateLimiter(time_scale=options.time_scale, enabled=options.rate_limits),
        faults=FaultInjector(FaultSpec.parse(options.faults)),
        drift=DriftInjector(drift_settings(options)),
        webhooks=WebhookSender(time_scale=options.time_scale),
    )
    api_routes = [Route(d.path, Operation(state, d), methods=[d.method]) for d in OPERATIONS]
    api_routes += control.api_routes(state)
    api = _starlette(api_routes)
    auth = _starlette(control.auth_routes(state))
    return SandboxApps(api=KeepCycle(api, world), auth=KeepCycle(auth, world), state=state)

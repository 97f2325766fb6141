"""Command line of the sandbox: `platform-sync sandbox ...` and `python -m sandbox ...`.

`serve` (the default action) runs the API and the token exchange; `advance`, `authorize` and
`catalog` talk to a running sandbox.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import httpx

from sandbox.auth import ALL_SCOPES, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from sandbox.options import catalog_source_options

COMMANDS = ("serve", "advance", "authorize", "catalog")
DEFAULT_WORLD = "sandbox.world:SyntheticWorld"
UNRULY_WORLD = "sandbox.world.unruly:UnrulyWorld"

DESCRIPTION = """\
A local, deterministic stand-in for the platform's API: all 20 operations over a synthetic seller's
data, the OAuth token exchange on a second port, rate limits, optional faults, and control routes
(/sandbox/advance, /sandbox/catalog, /sandbox/faults, /sandbox/stats) documented in docs/contracts.md,
and drift: records that depart from the spec as real APIs' do (/sandbox/drift, /sandbox/departures).

Without a command, `serve` runs. Examples:
  platform-sync sandbox                         # serve on 127.0.0.1:8400 (API) and :8401 (auth)
  platform-sync sandbox --scale 50000 --time-scale 60 --faults error=0.02,drop=0.01,seed=7
  platform-sync sandbox --drift 0.03            # 3% of the records depart from the spec
  platform-sync sandbox --unruly                # a world whose moves break the sync's rules
  platform-sync sandbox authorize --auth-url http://127.0.0.1:8401 --scope store_sales_read
  platform-sync sandbox advance --seconds 86400 --base-url http://127.0.0.1:8400

Run `platform-sync sandbox serve --help` for every serve option.
"""

FAULTS_HELP = """comma-separated key=value faults for API operations (off by default):
error=SHARE (500/502/503), slow=SHARE (answer after slow_seconds, default 2), drop=SHARE
(close the connection without an answer), truncate=SHARE (half the promised body, then close),
revoke_after=N (the token of the Nth API request is revoked: 401 from then on), seed=N"""


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


DRIFT_HELP = """share of the records of every read operation that depart from the spec, one to three
ways each (null, missing, unlisted_value, unlisted_field, converted, unconvertible), always the same
ones for a seed; GET /sandbox/departures lists those served (default: 0, none)"""


def _share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("must be a number between 0 and 1")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be a port number between 0 and 65535")
    return value


def _faults(text: str) -> str:
    from sandbox.faults import FaultSpec

    try:
        FaultSpec.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="platform-sync sandbox",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run the sandbox (the default command)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument(
        "--port",
        type=_port,
        default=8400,
        help="API port, base_url; 0 picks a free one (default: %(default)s)",
    )
    serve.add_argument(
        "--auth-port",
        type=_port,
        default=8401,
        help="token-exchange port, auth_url; 0 picks a free one (default: %(default)s)",
    )
    serve.add_argument(
        "--seed",
        type=int,
        default=1,
        help="world seed: same seed, scale and advances give the same data (default: %(default)s)",
    )
    serve.add_argument(
        "--scale",
        type=_positive_int,
        default=1000,
        help="number of sales at the initial clock; the rest scales from it (default: %(default)s)",
    )
    serve.add_argument(
        "--time-scale",
        type=_positive_float,
        default=1.0,
        help="divide every rate-limit window by this (60: 30/minute becomes 30/s) (default: %(default)s)",
    )
    serve.add_argument("--faults", type=_faults, default=None, metavar="SPEC", help=FAULTS_HELP)
    serve.add_argument("--drift", type=_share, default=0.0, metavar="RATE", help=DRIFT_HELP)
    serve.add_argument(
        "--drift-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of which records depart and how (default: the world's --seed)",
    )
    serve.add_argument(
        "--rate-limits",
        choices=("on", "off"),
        default="on",
        help="enforce the per-token, per-operation limits (default: %(default)s)",
    )
    serve.add_argument(
        "--webhook-url",
        default=None,
        metavar="URL",
        help="send signed webhook deliveries of the world's moves here (a ping first); needs a secret",
    )
    serve.add_argument(
        "--webhook-secret-env",
        default="SANDBOX_WEBHOOK_SECRET",
        metavar="NAME",
        help="environment variable holding the webhook signing secret (default: %(default)s); "
        "kept out of the command line, which other users of the machine can read",
    )
    serve.add_argument(
        "--log-level",
        default="warning",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn log level (default: %(default)s)",
    )
    serve.add_argument(
        "--unruly",
        action="store_true",
        help="serve the unruly world: as the clock advances, records are deleted, old sales charged back, "
        "expired ones paid, some updatedAt values in the future or in -03:00, renewals before updatedAt "
        "(docs/contracts.md part 2)",
    )
    serve.add_argument(
        "--world",
        default=DEFAULT_WORLD,
        metavar="MODULE:FACTORY",
        help="callable(seed, scale) returning the world; for tests (default: %(default)s)",
    )

    advance = commands.add_parser("advance", help="move a running sandbox's clock forward")
    advance.add_argument("--seconds", type=float, required=True, help="how far to move the clock")
    advance.add_argument(
        "--base-url", default="http://127.0.0.1:8400", help="the sandbox's API address (default: %(default)s)"
    )

    authorize = commands.add_parser("authorize", help="mint an authorization code (and optionally a token)")
    authorize.add_argument(
        "--auth-url",
        default="http://127.0.0.1:8401",
        help="the sandbox's token-exchange address (default: %(default)s)",
    )
    authorize.add_argument(
        "--client-id", default=DEMO_CLIENT_ID, help="client application (default: %(default)s)"
    )
    authorize.add_argument(
        "--scope",
        action="append",
        dest="scopes",
        metavar="SCOPE",
        choices=ALL_SCOPES,
        help="a scope to grant; repeat for more (default: all scopes)",
    )
    authorize.add_argument(
        "--exchange", action="store_true", help="also exchange the code and print the access token"
    )
    authorize.add_argument(
        "--client-secret", default=DEMO_CLIENT_SECRET, help="secret for --exchange (default: the demo secret)"
    )

    catalog = commands.add_parser(
        "catalog", help="print the ids the API cannot list (events, communities, schools, ...)"
    )
    catalog.add_argument(
        "--base-url", default="http://127.0.0.1:8400", help="the sandbox's API address (default: %(default)s)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help")):
        args_list.insert(0, "serve")
    args = build_parser().parse_args(args_list)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "advance":
            return _advance(args)
        if args.command == "authorize":
            return _authorize(args)
        return _catalog(args)
    except httpx.HTTPError as exc:
        print(f"error: {_describe(exc)}", file=sys.stderr)
        return 1


def _describe(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"{exc.response.status_code} from {exc.request.url}: {exc.response.text}"
    return f"{type(exc).__name__}: {exc} (is the sandbox running?)"


def _serve(args: argparse.Namespace) -> int:
    from sandbox.app import SandboxOptions, create_app
    from sandbox.routes.control import iso
    from sandbox.running import _load_world
    from sandbox.server import SandboxServer

    if args.unruly and args.world != DEFAULT_WORLD:
        print("error: --unruly and --world both choose the world; give one of them", file=sys.stderr)
        return 2
    factory = UNRULY_WORLD if args.unruly else args.world
    try:
        world = _load_world(factory, args.seed, args.scale)
    except (ImportError, AttributeError) as exc:
        print(f"error: cannot load the world {args.world!r}: {exc}", file=sys.stderr)
        return 2
    options = SandboxOptions(
        args.seed,
        args.scale,
        args.time_scale,
        args.rate_limits == "on",
        args.faults,
        drift=args.drift,
        drift_seed=args.drift_seed,
    )
    server = SandboxServer(
        create_app(world, options),
        host=args.host,
        port=args.port,
        auth_port=args.auth_port,
        log_level=args.log_level,
        quiet_logging=False,
    )

    secret = os.environ.get(args.webhook_secret_env, "")
    if args.webhook_url and not secret:
        print(f"error: --webhook-url needs a signing secret in ${args.webhook_secret_env}", file=sys.stderr)
        return 2

    def banner(started: SandboxServer) -> None:
        if args.webhook_url:  # in the server's event loop, where the sending task must run
            state = started.apps.state
            state.webhooks.configure(args.webhook_url, secret, iso(state.world.clock))
        print(
            f"sandbox serving: seed {args.seed}, scale {args.scale}, time scale {args.time_scale:g}, "
            f"rate limits {args.rate_limits}, faults {args.faults or 'off'}"
            + _drift_banner(args)
            + (", unruly world" if args.unruly else "")
        )
        if args.webhook_url:
            print(f"webhooks: {args.webhook_url}")
        print(f"base_url: {started.base_url}")
        print(f"auth_url: {started.auth_url}")
        print(f"client_id: {DEMO_CLIENT_ID}")
        print(f"client_secret: {DEMO_CLIENT_SECRET}")
        for line in sync_settings(started.base_url, started.auth_url, args.time_scale, world):
            print(line)
        print("stop with Ctrl+C (SIGINT) or SIGTERM", flush=True)

    server.run(banner)
    print("sandbox stopped", flush=True)
    return 0


def sync_settings(base_url: str, auth_url: str, time_scale: float, world: Any) -> list[str]:
    """The exact settings that point a sync at this sandbox (issue 51: without the time scale the sync
    paces itself to the real API's limits, and its ETA says 40 minutes), as environment variables."""
    options = {
        "base_url": base_url,
        "rate_limit_time_scale": f"{time_scale:g}",
        **{key: json.dumps(value) for key, value in catalog_source_options(world.catalog()).items()},
    }
    lines = ["to sync against it, set (or write the same keys in .dlt/config.toml, [sources.platform]):"]
    lines += [f"  export SOURCES__PLATFORM__{k.upper()}={shlex.quote(text)}" for k, text in options.items()]
    lines.append(
        "  export SOURCES__PLATFORM__ACCESS_TOKEN="
        f'"$(platform-sync sandbox authorize --auth-url {auth_url} --exchange)"'
    )
    return lines


def _drift_banner(args: argparse.Namespace) -> str:
    if not args.drift:  # the banner of a sandbox without drift stays as it was
        return ""
    seed = args.seed if args.drift_seed is None else args.drift_seed
    return f", drift {args.drift:g} (seed {seed})"


def _advance(args: argparse.Namespace) -> int:
    response = httpx.post(f"{args.base_url}/sandbox/advance", json={"seconds": args.seconds}, timeout=60)
    response.raise_for_status()
    print(response.json()["clock"])
    return 0


def _authorize(args: argparse.Namespace) -> int:
    body: dict[str, object] = {"client_id": args.client_id}
    if args.scopes:
        body["scopes"] = args.scopes
    response = httpx.post(f"{args.auth_url}/sandbox/authorize", json=body, timeout=60)
    response.raise_for_status()
    code = response.json()["code"]
    if not args.exchange:
        print(code)
        return 0
    exchange = {
        "client_id": args.client_id,
        "client_secret": args.client_secret,
        "code": code,
        "redirect_uri": "http://localhost/callback",
        "grant_type": "authorization_code",
    }
    response = httpx.post(f"{args.auth_url}/oauth/token", json=exchange, timeout=60)
    response.raise_for_status()
    print(response.json()["access_token"])
    return 0


def _catalog(args: argparse.Namespace) -> int:
    response = httpx.get(f"{args.base_url}/sandbox/catalog", timeout=60)
    response.raise_for_status()
    print(json.dumps(response.json(), indent=2))
    return 0

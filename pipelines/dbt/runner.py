"""Run the dbt project `dbt_models/` against the pipeline's own destination, and read headline figures.

dbt runs in a subprocess of the current interpreter (dbt's own entry point), so it sees the same
virtualenv and never shares a DuckDB handle with dlt. The profile comes from the pipeline:

- DuckDB: the committed profile `dbt_models/profiles/profiles.yml`, with `PLATFORM_SYNC_DUCKDB_PATH` set to
  the pipeline's database file (its name, with dbt run in its folder: `_run_beside_the_database`). dlt's
  own dbt runner is not used: its bundled DuckDB profile loads the `httpfs` extension, which tries to
  download and fails offline.
- PostgreSQL: a profile generated into a temporary directory; the password reaches dbt through an
  environment variable, never through a file.

Either way `PLATFORM_SYNC_RAW_SCHEMA` tells the sources where the raw tables are (the pipeline's dataset).

`platform-sync models` first checks that the dataset holds raw tables (`require_raw_tables`): dbt would
otherwise build empty marts on a destination the sync never wrote to and call it a success. After the
build it runs `dbt source freshness` on the raw tables present (`pipelines/dbt/freshness.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt

from pipelines.dbt.accounts import dbt_accounts_env
from pipelines.sync.accounts import account_pipeline, configured_accounts
from pipelines.sync.messages import duckdb_held_message
from pipelines.sync.platform_pipeline import DATASET_NAME, make_pipeline

DBT_PROJECT_DIR = Path(__file__).resolve().parents[2] / "dbt_models"
DBT_PROFILES_DIR = DBT_PROJECT_DIR / "profiles"
MARTS_SCHEMA = "marts"
MODELS_DESTINATIONS = ("duckdb", "postgres")  # the ones dbt_environment writes a profile for


class ModelsError(Exception):
    """The pipeline's destination is one the models cannot run on: not supported, or no raw tables."""


class WarehouseUnavailable(Exception):
    """The destination could not be reached to look for the raw tables (server down, wrong address)."""


class WarehouseHeld(Exception):
    """The DuckDB file is open in another program: nothing was run (exit 2, as `sync` says it)."""


@dataclass(frozen=True)
class NodeResult:
    """One dbt node of a run: a model, a test, a unit test."""

    unique_id: str
    status: str  # success, error, skipped, pass, fail, warn
    message: str | None = None
    failures: int | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("success", "pass", "warn")


@dataclass
class ModelsResult:
    """What one dbt invocation did."""

    command: str
    returncode: int
    nodes: list[NodeResult] = field(default_factory=list)
    output: str = ""

    @property
    def success(self) -> bool:
        return self.returncode == 0

    @property
    def failed(self) -> list[NodeResult]:
        return [node for node in self.nodes if node.status in ("error", "fail")]

    @property
    def warned(self) -> list[NodeResult]:
        return [node for node in self.nodes if node.status == "warn"]

    def verdict(self) -> dict[str, Any]:
        """The build's outcome as the models' JSON event says it: success or failed, the nodes that
        failed and those that warned (a test with `severity: warn` that found rows: the departures from
        the spec, the freshness of the data), and how many nodes ended in each status (issue 51: the event
        did not count dbt's warnings)."""
        statuses: dict[str, int] = {}
        for node in self.nodes:
            statuses[node.status] = statuses.get(node.status, 0) + 1
        return {
            "build": "success" if self.success else "failed",
            "failed": [node.unique_id for node in self.failed],
            "warned": [node.unique_id for node in self.warned],
            "statuses": dict(sorted(statuses.items())),
        }

    def status_of(self, name_part: str) -> list[NodeResult]:
        """The nodes whose unique id contains `name_part` (tests are named after model and column)."""
        return [node for node in self.nodes if name_part in node.unique_id]


def _destination_type(pipeline: dlt.Pipeline) -> str | None:
    return pipeline.destination.destination_type.rsplit(".", 1)[-1] if pipeline.destination else None


def describe_destination(pipeline: dlt.Pipeline) -> str:
    """Where the pipeline's destination is, for messages: never a password."""
    destination = _destination_type(pipeline)
    credentials: Any = pipeline.destination_client().config.credentials
    if destination == "duckdb":
        return f"duckdb database {Path(credentials.database).resolve()}"
    if destination == "postgres":
        return f"postgres database {credentials.database} on {credentials.host}:{credentials.port or 5432}"
    return f"{destination} destination"


def raw_tables(pipeline: dlt.Pipeline) -> list[str]:
    """The data tables (no `_` tables) in the pipeline's dataset, sorted; [] when there is none.

    A DuckDB file that does not exist has none, and is not created by looking.
    """
    if _destination_type(pipeline) == "duckdb":
        credentials: Any = pipeline.destination_client().config.credentials
        database = credentials.database
        if not database or database == ":memory:" or not Path(database).exists():
            return []
    try:
        with pipeline.sql_client() as client:
            rows = client.execute_sql(
                "select table_name from information_schema.tables where table_schema = %s",
                client.dataset_name,
            )
    except Exception as exc:  # every driver has its own errors; the first line says what happened
        held = duckdb_held_message(str(exc), "No model was built.")
        if held is not None:
            raise WarehouseHeld(held) from exc
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = describe_destination(pipeline)
        raise WarehouseUnavailable(f"cannot reach the {where}: {first_line}") from exc
    # `_dlt_*` are dlt's, `_platform_sync_runs` the run log: a run writes them even when it loads nothing
    return sorted(str(name) for (name,) in rows or [] if not str(name).startswith("_"))


def require_raw_tables(pipeline: dlt.Pipeline) -> list[str]:
    """The raw tables, or a ModelsError naming the destination and dataset that have none (or a
    destination the models do not run on, before connecting to it)."""
    destination = _destination_type(pipeline)
    if destination not in MODELS_DESTINATIONS:
        raise ModelsError(
            f"`platform-sync models` runs on {' and '.join(MODELS_DESTINATIONS)}, not {destination}: "
            "run dbt on dbt_models/ with a profile of your own (README, Other warehouses)"
        )
    tables = raw_tables(pipeline)
    if not tables:
        where = describe_destination(pipeline)
        raise ModelsError(
            f"no raw tables in the dataset {pipeline.dataset_name!r} of the {where}: "
            "run `platform-sync sync` into it first, or give `models` the --destination and --dataset "
            "the sync used"
        )
    return tables


def dbt_environment(pipeline: dlt.Pipeline, workdir: Path) -> tuple[Path, dict[str, str]]:
    """The profiles directory and the environment variables that point dbt at the pipeline's data."""
    destination = _destination_type(pipeline)
    # the configured accounts' datasets, which staging unions (docs/accounts.md); none: this dataset
    env = {"PLATFORM_SYNC_RAW_SCHEMA": pipeline.dataset_name, **dbt_accounts_env()}
    credentials: Any = pipeline.destination_client().config.credentials
    if destination == "duckdb":
        database = credentials.database
        if not database or database == ":memory:":
            raise ModelsError("the models need a DuckDB database file, not an in-memory database")
        env["PLATFORM_SYNC_DUCKDB_PATH"] = str(Path(database).resolve())
        return DBT_PROFILES_DIR, env
    if destination == "postgres":
        profile = {
            "platform_sync": {
                "target": "postgres",
                "outputs": {
                    "postgres": {
                        "type": "postgres",
                        "host": credentials.host,
                        "port": int(credentials.port or 5432),
                        "user": credentials.username,
                        "password": "{{ env_var('PLATFORM_SYNC_PG_PASSWORD') }}",
                        "dbname": credentials.database,
                        "schema": "public",
                        "threads": 2,
                    }
                },
            }
        }
        env["PLATFORM_SYNC_PG_PASSWORD"] = str(credentials.password or "")
        env["PGTZ"] = "UTC"  # libpq's session time zone: days and months of the marts are UTC ones
        (workdir / "profiles.yml").write_text(json.dumps(profile, indent=2))  # JSON is YAML
        return workdir, env
    raise ModelsError(f"running the models on the destination {destination!r} is not supported yet")


# What the `dbt` console script runs; `python -m dbt.cli.main` would warn about a module imported twice.
_DBT_ENTRY_POINT = "import sys; from dbt.cli.main import cli; sys.exit(cli())"


def run_models(
    pipeline: dlt.Pipeline,
    command: str = "build",
    select: str | None = None,
    *,
    extra_args: Sequence[str] = (),
    target_path: str | Path | None = None,
    echo: bool = True,
) -> ModelsResult:
    """Run `dbt <command>` (build, run, test, docs generate, ...) on the pipeline's destination.

    `select` is a dbt node selection. Output is streamed to stdout when `echo` (and kept in the
    result); per-node statuses come from dbt's run_results.json, in `target_path` (by default
    `DBT_TARGET_PATH`, dbt's own variable, or `dbt_models/target`).
    """
    with _workdir() as workdir:
        profiles_dir, env_vars = dbt_environment(pipeline, workdir)
        target = dbt_target_path(target_path)
        cwd = _run_beside_the_database(env_vars)
        args = [
            sys.executable,
            "-c",
            _DBT_ENTRY_POINT,
            *command.split(),
            "--project-dir",
            str(DBT_PROJECT_DIR),
            "--profiles-dir",
            str(profiles_dir),
            "--target-path",
            str(target),
        ]
        if select:
            args += ["--select", select]
        args += list(extra_args)
        env = {**os.environ, **env_vars, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        env.setdefault("DBT_LOG_PATH", str(workdir / "logs"))
        process = subprocess.Popen(
            args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()
        returncode = process.wait()
        return ModelsResult(command, returncode, _node_results(target / "run_results.json"), "".join(lines))


def _run_beside_the_database(env_vars: dict[str, str]) -> Path:
    """The folder dbt runs in: the DuckDB file's, with the profile's path its name only.

    dbt's partial parsing reuses the project's parse only while the profile's connection (DuckDB's path
    included) is the same as when it was saved; with the file's name relative to the folder dbt runs in,
    every warehouse file of one name is the same connection to it, and a saved parse serves them all (the
    suite's hundreds of warehouses, a parse each: issue 46). `--project-dir`, `--profiles-dir` and the
    target path are absolute or the project's, so nothing else depends on the folder."""
    database = env_vars.get("PLATFORM_SYNC_DUCKDB_PATH")
    if not database:
        return DBT_PROJECT_DIR
    env_vars["PLATFORM_SYNC_DUCKDB_PATH"] = Path(database).name
    return Path(database).parent


def dbt_target_path(target_path: str | Path | None = None) -> Path:
    """Where dbt writes its artifacts: `target_path`, else `DBT_TARGET_PATH`, else dbt_models/target."""
    if target_path:
        return Path(target_path)
    return Path(os.environ.get("DBT_TARGET_PATH") or DBT_PROJECT_DIR / "target")


@contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="platform-sync-dbt-") as directory:
        yield Path(directory)


def _node_results(path: Path) -> list[NodeResult]:
    if not path.exists():
        return []
    results = json.loads(path.read_text()).get("results", [])
    return [NodeResult(r["unique_id"], r["status"], r.get("message"), r.get("failures")) for r in results]


# ------------------------------------------------------------------------------------------- headlines

HEADLINE_QUERIES: tuple[tuple[str, str], ...] = (
    (
        "Revenue by month (paid sales, by payment month)",
        f"""
        select
            cast(date_trunc('month', coalesce(paid_at, created_at)) as date) as month,
            currency,
            count(*) as paid_sales,
            sum(gross_amount) as gross,
            sum(refunded_amount) as refunded,
            sum(net_revenue_amount) as net_revenue
        from {MARTS_SCHEMA}.fct_sales
        where was_paid
        group by 1, 2
        order by 1 desc, 2
        limit 12
        """,
    ),
    (
        "Active subscriptions and MRR (latest month, to the newest change of a sale or subscription)",
        f"""
        with newest as (
            select max(day) as day from (
                select max(greatest(cast(started_at as date), cast(updated_at as date))) as day
                from {MARTS_SCHEMA}.fct_subscriptions
                union all
                select max(greatest(coalesce(paid_on, created_on), cast(updated_at as date)))
                from {MARTS_SCHEMA}.fct_sales
            ) as days
        )
        select month_start as month, currency, count_active_subscriptions as active_subscriptions,
            mrr_amount as mrr, new_mrr_amount as new_mrr, churned_mrr_amount as churned_mrr, churn_rate,
            case
                when newest.day + 1 < cast(month_start + interval '1 month' as date)
                    then 'to ' || cast(newest.day as varchar)
                else 'whole month'
            end as period
        from {MARTS_SCHEMA}.subscriptions_mrr_monthly
        cross join newest
        where month_start = (select max(month_start) from {MARTS_SCHEMA}.subscriptions_mrr_monthly)
        order by currency
        """,
    ),
    (
        "Top products by net revenue (every paid sale found, all time)",
        f"""
        select
            coalesce(products.product_name, sales.product_id) as product,
            sales.currency,
            count(*) as paid_sales,
            sum(sales.gross_amount) as gross,
            sum(sales.net_revenue_amount) as net_revenue,
            min(coalesce(sales.paid_on, sales.created_on)) as first_sale,
            max(coalesce(sales.paid_on, sales.created_on)) as last_sale
        from {MARTS_SCHEMA}.fct_sales as sales
        left join {MARTS_SCHEMA}.dim_products as products
            on sales.account = products.account
            and sales.product_id = products.product_id
        where sales.was_paid
        group by 1, 2
        order by net_revenue desc, product
        limit 5
        """,
    ),
)


def headline_figures(pipeline: dlt.Pipeline) -> list[tuple[str, list[tuple[str, ...]]]]:
    """(title, rows) for revenue by month, active subscriptions and MRR, top products.

    Rows are formatted text, the first row holding the column names, all padded to align.
    """
    figures = []
    with pipeline.sql_client() as client:
        for title, sql in HEADLINE_QUERIES:
            with client.execute_query(sql) as cursor:
                names = [column[0] for column in cursor.description]
                rows = cursor.fetchall()
            figures.append((title, _aligned([tuple(names), *(tuple(_fmt(v) for v in row) for row in rows)])))
    return figures


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        return f"{value:,.2f}"
    if isinstance(value, float):
        return f"{value:.1%}" if 0 <= value <= 1 else f"{value:,.2f}"
    if isinstance(value, datetime | date):
        return value.isoformat()[:10]
    return str(value)


def _aligned(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    if not rows:
        return rows
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [tuple(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m pipelines.dbt.runner [dbt command ...]`: the models on the default pipeline."""
    from pipelines.sync.platform_pipeline import make_pipeline

    arguments = list(argv if argv is not None else sys.argv[1:])
    result = run_models(make_pipeline(), " ".join(arguments) or "build")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())


def models_pipeline(destination: str, dataset_name: str = DATASET_NAME) -> dlt.Pipeline:
    """The pipeline whose destination `platform-sync models` runs on: the default one, or with accounts
    configured (and no other dataset asked for) the first account whose dataset holds raw tables (the
    models read every account's; the warehouse is the same)."""
    accounts = configured_accounts()
    if not accounts or dataset_name != DATASET_NAME:
        return make_pipeline(destination, dataset_name)
    pipelines = [account_pipeline(account, destination) for account in accounts]
    return next((pipeline for pipeline in pipelines if raw_tables(pipeline)), pipelines[0])

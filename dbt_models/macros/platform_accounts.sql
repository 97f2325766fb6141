{#-
    Many accounts in one warehouse (docs/accounts.md): every account's raw tables are in a schema of its
    own, `platform_raw_<account>` (the single-account setup's `platform_raw` is the account `default`).
    Staging reads the union of the accounts' tables, with an `account` column, through the macros of
    platform_columns.sql; the sources stay dbt sources (lineage, freshness), re-pointed per account.

    The accounts come from the var `platform_accounts` (a list of {name, schema}), else from the
    environment variable PLATFORM_SYNC_ACCOUNTS (the same list as JSON; `platform-sync models` and
    Dagster set it from `.dlt/config.toml`), else the one account `default` in the source's own schema
    (PLATFORM_SYNC_RAW_SCHEMA, `platform_raw`): nothing changes without accounts.

        dbt build --vars '{platform_accounts: [{name: acme, schema: platform_raw_acme}]}'
-#}

{% macro platform_accounts(relation) -%}
    {%- set configured = var('platform_accounts', none) -%}
    {%- if configured is none -%}
        {%- set text = env_var('PLATFORM_SYNC_ACCOUNTS', '') -%}
        {%- set configured = fromjson(text) if text else none -%}
    {%- endif -%}
    {%- if configured is none or configured | length == 0 -%}
        {{ return([{'name': 'default', 'schema': relation.schema}]) }}
    {%- endif -%}
    {{ return(configured) }}
{%- endmacro %}

{#- The account's copy of a source relation: the same table in the account's schema. -#}
{% macro platform_account_relation(relation, account) -%}
    {{ return(relation.incorporate(path={'schema': account['schema']})) }}
{%- endmacro %}

{#- Whether a model (a relation, or a model given to a test) has the `account` column; true while
    parsing or linting, when nothing is looked up. -#}
{% macro platform_has_account(model) -%}
    {%- if not execute or not var('platform_introspect', true) -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set relation = load_relation(model) if model is not string else none -%}
    {%- if relation is none -%}
        {{ return(true) }}
    {%- endif -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- if column.name | lower == 'account' -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}

{#- A snapshot taken before accounts existed has no `account` column, and dbt reads the snapshot's
    unique key from it before it adds new columns: the snapshots' pre-hook adds the column (null: the
    `default` account's versions, as their unique key and the models reading them say). -#}
{% macro platform_add_account_column(relation) -%}
    {%- set existing = load_relation(relation) if execute else none -%}
    {%- set names = [] -%}
    {%- if existing is not none -%}
        {%- for column in adapter.get_columns_in_relation(existing) -%}
            {%- do names.append(column.name | lower) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if existing is not none and 'account' not in names -%}
        alter table {{ existing }} add column account {{ dbt.type_string() }}
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}

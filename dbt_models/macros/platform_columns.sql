{#-
    Staging reads raw tables whose column set depends on the data dlt has seen: a nested object that
    was null in every loaded row (say `refund` when no sale was refunded yet) has no columns, a list
    that was always empty has no child table, and a resource that is not configured (no event ids)
    has no table at all. These macros let every staging model declare the full spec shape anyway:

        {%- set cols = platform_source_columns(source('platform', 'sales')) %}
        with source as ({{ platform_source_select(source('platform', 'sales'), cols) }}),
        renamed as (select {{ platform_col(cols, 'gross_gain__value', 'money') }} as gross_gain_amount ...)

    A column that exists is cast to its type; a missing one becomes a typed null; a missing table
    becomes an empty relation. When the var `platform_introspect` is false (linting), nothing is
    looked up and every column is rendered as if it existed.
-#}

{% macro platform_source_columns(relation) -%}
    {%- if not execute or not var('platform_introspect', true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set names = [] -%}
    {%- for account in platform_accounts(relation) -%}
        {%- set existing = load_relation(platform_account_relation(relation, account)) -%}
        {%- if existing is not none -%}
            {%- for column in adapter.get_columns_in_relation(existing) -%}
                {%- if (column.name | lower) not in names -%}
                    {%- do names.append(column.name | lower) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}

{#- The union of the accounts' tables, each row with its `account`; a column one account's table lacks
    (dlt evolves each account's schema on its own) is a typed null there, typed as another account's. -#}
{% macro platform_source_select(relation, cols) -%}
    {%- if cols is none -%}
        select cast('default' as {{ dbt.type_string() }}) as account, * from {{ relation }}
    {%- elif cols | length == 0 -%}
        select cast(null as {{ dbt.type_string() }}) as account, 1 as no_raw_table where 1 = 0
    {%- else -%}
        {%- set present = [] -%}
        {%- set types = {} -%}
        {%- for account in platform_accounts(relation) -%}
            {%- set existing = load_relation(platform_account_relation(relation, account)) -%}
            {%- if existing is not none -%}
                {%- set columns = {} -%}
                {%- for column in adapter.get_columns_in_relation(existing) -%}
                    {%- do columns.update({column.name | lower: column.name}) -%}
                    {%- do types.setdefault(column.name | lower, column.data_type) -%}
                {%- endfor -%}
                {%- do present.append((account, existing, columns)) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- for account, existing, columns in present %}
        {% if not loop.first %}union all
        {% endif -%}
        select cast('{{ account["name"] }}' as {{ dbt.type_string() }}) as account
            {%- for name in cols -%}
                , {% if name in columns %}{{ adapter.quote(columns[name]) }}{% else %}cast(null as {{ types[name] }}){% endif %} as {{ adapter.quote(name) }}
            {%- endfor %}
        from {{ existing }}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}

{% macro platform_type(kind) -%}
    {%- if kind == 'string' -%} {{ dbt.type_string() }}
    {%- elif kind == 'int' -%} {{ dbt.type_bigint() }}
    {%- elif kind == 'float' -%} {{ type_double() }}
    {%- elif kind == 'money' or kind == 'decimal' -%} {{ type_money() }}
    {%- elif kind == 'bool' -%} {{ dbt.type_boolean() }}
    {%- elif kind == 'timestamp' -%} {{ type_timestamptz() }}
    {%- elif kind == 'date' -%} {{ type_date() }}
    {%- else -%} {{ exceptions.raise_compiler_error('unknown platform type ' ~ kind) }}
    {%- endif -%}
{%- endmacro %}

{#- kind: string, int, float, money, decimal (a non-money exact number), bool, timestamp, date (a timestamp cut to its UTC date),
    timestamp_text (a string holding an ISO 8601 or `YYYY-MM-DD HH:MM:SS` timestamp; a naive one is
    UTC; an unparsable one is null), date_text, json_text (a json value kept as text). -#}
{% macro platform_col(cols, name, kind, relation_alias=none) -%}
    {%- set present = cols is none or (name | lower) in cols -%}
    {%- if relation_alias is not none -%}{%- set name = relation_alias ~ '.' ~ name -%}{%- endif -%}
    {%- if kind == 'timestamp_text' -%}
        {%- if present -%}
            {{ try_cast_timestamptz(dbt.cast(name, dbt.type_string())) }}
        {%- else -%}
            cast(null as {{ type_timestamptz() }})
        {%- endif -%}
    {%- elif kind == 'date_text' -%}
        {%- if present -%}
            cast({{ try_cast_timestamptz(dbt.cast(name, dbt.type_string())) }} as {{ type_date() }})
        {%- else -%}
            cast(null as {{ type_date() }})
        {%- endif -%}
    {%- elif kind == 'json_text' -%}
        {%- if present -%}
            cast({{ name }} as {{ dbt.type_string() }})
        {%- else -%}
            cast(null as {{ dbt.type_string() }})
        {%- endif -%}
    {%- else -%}
        {%- if present -%}
            cast({{ name }} as {{ platform_type(kind) }})
        {%- else -%}
            cast(null as {{ platform_type(kind) }})
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- Portable types used by staging. Both DuckDB and PostgreSQL spell these the same way;
    dispatch lets another adapter override them. -#}

{% macro type_timestamptz() -%}
    {{ return(adapter.dispatch('type_timestamptz', 'platform_sync')()) }}
{%- endmacro %}

{% macro default__type_timestamptz() -%}
    timestamp with time zone
{%- endmacro %}

{% macro type_money() -%}
    {{ return(adapter.dispatch('type_money', 'platform_sync')()) }}
{%- endmacro %}

{#- Money `value`s: exact decimals, wide enough for sums over years of sales. -#}
{% macro default__type_money() -%}
    numeric(28, 6)
{%- endmacro %}

{% macro type_date() -%}
    date
{%- endmacro %}

{#- A text holding a timestamp -> timestamp with time zone; null (not an error) when it is not one.
    dbt.safe_cast is a plain cast on DuckDB and PostgreSQL, so each gets its own form. -#}
{% macro try_cast_timestamptz(expression) -%}
    {{ return(adapter.dispatch('try_cast_timestamptz', 'platform_sync')(expression)) }}
{%- endmacro %}

{% macro default__try_cast_timestamptz(expression) -%}
    {{ dbt.safe_cast(expression, type_timestamptz()) }}
{%- endmacro %}

{% macro duckdb__try_cast_timestamptz(expression) -%}
    try_cast({{ expression }} as {{ type_timestamptz() }})
{%- endmacro %}

{% macro postgres__try_cast_timestamptz(expression) -%}
    case
        when {{ expression }} ~ '^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$'
            then cast({{ expression }} as {{ type_timestamptz() }})
    end
{%- endmacro %}

{#- A 64-bit float on every engine. dbt.type_float() is `float`, which DuckDB reads as a 32-bit REAL
    (2/7 = 0.2857142984...) and PostgreSQL as double precision: rates and coordinates would differ. -#}
{% macro type_double() -%}
    {{ return(adapter.dispatch('type_double', 'platform_sync')()) }}
{%- endmacro %}

{% macro default__type_double() -%}
    double precision
{%- endmacro %}

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

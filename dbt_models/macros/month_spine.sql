{#- A relation of the integers 0..999 in a column `offset_value`: with dbt.dateadd it spans any
    month range of the data. Portable (a cross join of digits, as dbt_utils.date_spine does) where
    generate_series is not. -#}
{% macro integers_0_to_999() -%}
    select hundreds.digit * 100 + tens.digit * 10 + ones.digit as offset_value
    from ({{ _digits() }}) as hundreds
    cross join ({{ _digits() }}) as tens
    cross join ({{ _digits() }}) as ones
{%- endmacro %}

{% macro _digits() -%}
    {%- for digit in range(10) -%}
        select {{ digit }} as digit{% if not loop.last %} union all {% endif %}
    {%- endfor -%}
{%- endmacro %}

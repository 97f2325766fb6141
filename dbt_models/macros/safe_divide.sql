{#- numerator / denominator as a float, null when the denominator is 0 or null. -#}
{% macro safe_divide(numerator, denominator) -%}
    cast({{ numerator }} as {{ dbt.type_float() }}) / nullif(cast({{ denominator }} as {{ dbt.type_float() }}), 0)
{%- endmacro %}

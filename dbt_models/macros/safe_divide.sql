{#- numerator / denominator as a 64-bit float, null when the denominator is 0 or null. -#}
{% macro safe_divide(numerator, denominator) -%}
    cast({{ numerator }} as {{ type_double() }}) / nullif(cast({{ denominator }} as {{ type_double() }}), 0)
{%- endmacro %}

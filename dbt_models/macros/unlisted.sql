{#- True when `column` holds a value that is not in `values` (an enum list of vars.platform_enums),
    null included: the complement of the pivot columns `column = 'value'`, so that a pivot with one
    more column for it adds up to its total whatever the API sends. -#}
{% macro unlisted(column, values) -%}
    ({{ column }} is null or {{ column }} not in ('{{ values | join("', '") }}'))
{%- endmacro %}

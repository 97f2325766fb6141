{#- `creditCard` -> `credit_card`, `presence_confirmed` unchanged: column names from the spec's enums. -#}
{% macro snake_case(value) -%}
    {{ return(modules.re.sub('([a-z0-9])([A-Z])', '\\1_\\2', value) | lower) }}
{%- endmacro %}

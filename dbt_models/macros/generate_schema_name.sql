{#- Models with a custom schema land in exactly that schema (`staging`, `intermediate`, `marts`),
    not in `<target schema>_<custom>`, so analysts find the marts in `marts` on every target. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}

{#- A portable hash key over several columns (nulls distinct from empty strings), in the manner of
    dbt_utils.generate_surrogate_key, which cannot be installed here. -#}
{% macro surrogate_key(columns) -%}
    {%- set parts = [] -%}
    {%- for column in columns -%}
        {%- do parts.append("coalesce(cast(" ~ column ~ " as " ~ dbt.type_string() ~ "), '_null_')") -%}
        {%- if not loop.last -%}{%- do parts.append("'|'") -%}{%- endif -%}
    {%- endfor -%}
    {{ dbt.hash(dbt.concat(parts)) }}
{%- endmacro %}

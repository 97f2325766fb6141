{#- Fails on every row of the model where `expression` is not true (a null counts as a failure).
    Like dbt_utils.expression_is_true; use the test's `where` config to restrict the rows. -#}
{% test expression_is_true(model, expression, column_name=none) %}

select *
from {{ model }}
where not coalesce(({{ column_name ~ ' ' if column_name else '' }}{{ expression }}), false)

{% endtest %}

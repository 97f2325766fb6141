{#- Fails on every combination of `combination_of_columns` that occurs more than once, within an account
    when the model has one (docs/accounts.md). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}
{%- if platform_has_account(model) and 'account' not in combination_of_columns %}
    {%- set combination_of_columns = ['account'] + combination_of_columns %}
{%- endif %}

select
    {{ combination_of_columns | join(', ') }},
    count(*) as count_rows
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1

{% endtest %}

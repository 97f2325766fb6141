{#- dbt's unique, within an account (docs/accounts.md): ids are unique per account only, two accounts
    may hold the same id (a co-produced product's sale is seen by both producers). On a model without an
    `account` column it is dbt's own test. -#}
{% test unique(model, column_name) %}
    {%- if platform_has_account(model) %}
select
    account,
    {{ column_name }} as unique_field,
    count(*) as n_records
from {{ model }}
where {{ column_name }} is not null
group by account, {{ column_name }}
having count(*) > 1
    {%- else %}
    {{ adapter.dispatch('test_unique', 'dbt')(model, column_name) }}
    {%- endif %}
{% endtest %}

{#- dbt's relationships, within an account: a row's reference is looked up among the rows of its own
    account (docs/accounts.md). Between models without an `account` column it is dbt's own test. -#}
{% test relationships(model, column_name, to, field) %}
    {%- if platform_has_account(model) and platform_has_account(to) %}
with child as (
    select account, {{ column_name }} as from_field
    from {{ model }}
    where {{ column_name }} is not null
),

parent as (
    select account, {{ field }} as to_field
    from {{ to }}
)

select child.account, child.from_field
from child
left join parent
    on child.account = parent.account
    and child.from_field = parent.to_field
where parent.to_field is null
    {%- else %}
    {{ adapter.dispatch('test_relationships', 'dbt')(model, column_name, to, field) }}
    {%- endif %}
{% endtest %}

-- depends_on: {{ ref('int_platform__subscription_current_prices') }}
{#- The monthly amount of each subscription over time, from the snapshot of its prices. The first
    version seen is taken to hold since the subscription started (valid_from null): history before the
    first build is unknown, so it neither expands nor contracts. Before any snapshot was taken (`dbt run`
    takes none, `dbt build` does), each subscription has its current price as its only version. -#}
{%- set snapshot = ref('snp_platform__subscription_prices') %}
{%- set has_snapshot = not execute or load_relation(snapshot) is not none %}

with versions as (

    {%- if has_snapshot %}

    select * from {{ snapshot }}

    {%- else %}

        select
            *,
            cast(null as {{ type_timestamptz() }}) as dbt_valid_from,
            cast(null as {{ type_timestamptz() }}) as dbt_valid_to
        from {{ ref('int_platform__subscription_current_prices') }}

    {%- endif %}

),

final as (

    select
        -- a version taken before accounts existed is the `default` account's
        coalesce(account, 'default') as account,  -- noqa: RF04
        subscription_id,
        price_currency as currency,
        {{ monthly_amount('price_amount', 'frequency_type', 'period_length') }} as monthly_amount,
        case
            when row_number() over (partition by account, subscription_id order by dbt_valid_from) > 1
                then dbt_valid_from
        end as valid_from,
        dbt_valid_to as valid_to
    from versions

)

select * from final

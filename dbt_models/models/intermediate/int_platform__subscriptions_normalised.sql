{#- Subscriptions with their price per month, main product and the interval in which they were active:
    the shared ground of fct_subscriptions and subscriptions_mrr_monthly. -#}
{%- set active_statuses = ['upToDate', 'awaitingPayment', 'late', 'trial', 'free'] %}

with subscriptions as (

    select * from {{ ref('stg_platform__subscriptions') }}

),

main_products as (

    select
        account,
        subscription_id,
        product_id,
        product_title
    from {{ ref('stg_platform__subscription_products') }}
    where product_position = 0

),

normalised as (

    select
        subscriptions.*,
        main_products.product_id,
        main_products.product_title,
        coalesce(nullif(subscriptions.frequency_value, 0), 1) as period_length,
        coalesce(subscriptions.starts_at, subscriptions.created_at) as started_at,
        subscriptions.subscription_status in ('{{ active_statuses | join("', '") }}') as is_active,
        subscriptions.subscription_status not in ('trial', 'free') as is_paying
    from subscriptions
    left join main_products
        on subscriptions.account = main_products.account
        and subscriptions.subscription_id = main_products.subscription_id

),

final as (

    select
        *,
        {{ monthly_amount('price_amount', 'frequency_type', 'period_length') }} as monthly_amount,
        case
            when is_active then null
            else coalesce(interrupted_at, finishes_at, updated_at)
        end as ended_at
    from normalised

)

select * from final

{#- Each subscription's price as the API shows it now, stamped with the API's own update time: what
    the snapshot snp_platform__subscription_prices keeps a version of whenever that time moves. -#}
with subscriptions as (

    select * from {{ ref('stg_platform__subscriptions') }}

),

final as (

    select
        account,
        subscription_id,
        price_currency,
        price_amount,
        frequency_type,
        coalesce(nullif(frequency_value, 0), 1) as period_length,
        -- a departed (null) update time falls back to the creation time: the snapshot needs one
        coalesce(updated_at, created_at) as updated_at
    from subscriptions
    where
        subscription_id is not null
        and coalesce(updated_at, created_at) is not null

)

select * from final

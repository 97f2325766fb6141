{#- Every month (its first day) from the earliest to the latest date an account's store data mentions,
    per account: the spine of the monthly marts, so a month without activity still has its row. -#}
with sales as (

    select * from {{ ref('stg_platform__sales') }}

),

subscriptions as (

    select * from {{ ref('stg_platform__subscriptions') }}

),

transfers as (

    select * from {{ ref('stg_platform__transfers') }}
    where not is_deleted

),

dates as (

    select
        account,
        created_at as event_at
    from sales
    union all
    select
        account,
        updated_at as event_at
    from sales
    union all
    select
        account,
        credited_at as event_at
    from sales
    union all
    select
        account,
        coalesce(starts_at, created_at) as event_at
    from subscriptions
    union all
    select
        account,
        updated_at as event_at
    from subscriptions
    union all
    select
        account,
        created_at as event_at
    from transfers
    union all
    select
        account,
        cast(requested_on as {{ type_timestamptz() }}) as event_at
    from transfers
    union all
    select
        account,
        cast(completed_on as {{ type_timestamptz() }}) as event_at
    from transfers

),

bounds as (

    select
        account,
        cast({{ dbt.date_trunc('month', 'min(event_at)') }} as date) as first_month,
        cast({{ dbt.date_trunc('month', 'max(event_at)') }} as date) as last_month
    from dates
    group by account

),

offsets as (

    {{ integers_0_to_999() }}

),

months as (

    select
        bounds.account,
        cast({{ dbt.dateadd('month', 'offsets.offset_value', 'bounds.first_month') }} as date) as month_start
    from bounds
    cross join offsets
    where offsets.offset_value <= {{ dbt.datediff('bounds.first_month', 'bounds.last_month', 'month') }}

),

final as (

    select
        account,
        month_start,
        cast({{ dbt.dateadd('month', '1', 'month_start') }} as date) as next_month_start
    from months

)

select * from final

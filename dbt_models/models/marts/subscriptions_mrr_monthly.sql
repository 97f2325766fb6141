{#- Month x currency: MRR at the end of the month, subscriptions gained and lost in it, churn rate.
    The months run from the first subscription's start to the latest change in the data. -#}
with subscriptions as (

    select
        subscription_id,
        price_currency as currency,
        monthly_amount,
        is_paying,
        started_at,
        ended_at
    from {{ ref('int_platform__subscriptions_normalised') }}
    where started_at is not null

),

bounds as (

    select
        cast({{ dbt.date_trunc('month', 'min(started_at)') }} as date) as first_month
    from subscriptions

),

months as (

    select
        months.month_start,
        months.next_month_start
    from {{ ref('int_platform__months') }} as months
    cross join bounds
    where months.month_start >= bounds.first_month

),

currencies as (

    select distinct currency from subscriptions

),

grid as (

    select
        months.month_start,
        months.next_month_start,
        currencies.currency
    from months
    cross join currencies

),

per_subscription as (

    select
        grid.month_start,
        grid.currency,
        subscriptions.subscription_id,
        subscriptions.is_paying,
        subscriptions.monthly_amount,
        -- active at the end of the month
        (
            subscriptions.started_at < grid.next_month_start
            and (subscriptions.ended_at is null or subscriptions.ended_at >= grid.next_month_start)
        ) as is_active_at_end,
        -- active at the start of the month (the end of the previous one)
        (
            subscriptions.started_at < grid.month_start
            and (subscriptions.ended_at is null or subscriptions.ended_at >= grid.month_start)
        ) as is_active_at_start,
        (
            subscriptions.started_at >= grid.month_start
            and subscriptions.started_at < grid.next_month_start
        ) as is_new,
        (
            subscriptions.ended_at >= grid.month_start
            and subscriptions.ended_at < grid.next_month_start
        ) as is_churned
    from grid
    inner join subscriptions
        on grid.currency = subscriptions.currency
        and grid.next_month_start > subscriptions.started_at

),

aggregated as (

    select
        month_start,
        currency,
        sum(case when is_active_at_end then 1 else 0 end) as count_active_subscriptions,
        sum(case when is_active_at_start then 1 else 0 end) as count_active_at_start,
        sum(case when is_new then 1 else 0 end) as count_new_subscriptions,
        sum(case when is_churned then 1 else 0 end) as count_churned_subscriptions,
        sum(case when is_churned and is_active_at_start then 1 else 0 end) as count_churned_from_start,
        sum(case when is_active_at_end and is_paying then monthly_amount else 0 end) as mrr_amount,
        sum(case when is_new and is_paying then monthly_amount else 0 end) as new_mrr_amount,
        sum(case when is_churned and is_paying then monthly_amount else 0 end) as churned_mrr_amount
    from per_subscription
    group by month_start, currency

),

final as (

    select
        {{ surrogate_key(['grid.month_start', 'grid.currency']) }} as month_currency_key,
        grid.month_start,
        grid.currency,
        coalesce(aggregated.mrr_amount, 0) as mrr_amount,
        coalesce(aggregated.new_mrr_amount, 0) as new_mrr_amount,
        coalesce(aggregated.churned_mrr_amount, 0) as churned_mrr_amount,
        coalesce(aggregated.count_active_subscriptions, 0) as count_active_subscriptions,
        coalesce(aggregated.count_active_at_start, 0) as count_active_at_start,
        coalesce(aggregated.count_new_subscriptions, 0) as count_new_subscriptions,
        coalesce(aggregated.count_churned_subscriptions, 0) as count_churned_subscriptions,
        {{ safe_divide('aggregated.count_churned_from_start', 'aggregated.count_active_at_start') }} as churn_rate
    from grid
    left join aggregated
        on grid.month_start = aggregated.month_start
        and grid.currency = aggregated.currency

)

select * from final

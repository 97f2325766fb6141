{#- Month x currency: MRR at the end of the month and its movements in it (new, expansion, contraction,
    churn), subscriptions gained and lost, churn rate. Each subscription counts at the monthly amount it
    had at that moment (int_platform__subscription_price_history), so that
    MRR = previous MRR + new + expansion - contraction - churned (assert_mrr_movements_add_up).
    The months run from the first subscription's start to the latest change in the data. -#}
with subscriptions as (

    select
        account,
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
        account,
        cast({{ dbt.date_trunc('month', 'min(started_at)') }} as date) as first_month
    from subscriptions
    group by account

),

months as (

    select
        months.account,
        months.month_start,
        months.next_month_start
    from {{ ref('int_platform__months') }} as months
    inner join bounds
        on months.account = bounds.account
    where months.month_start >= bounds.first_month

),

currencies as (

    select distinct
        account,
        currency
    from subscriptions

),

grid as (

    select
        months.account,
        months.month_start,
        months.next_month_start,
        currencies.currency
    from months
    inner join currencies
        on months.account = currencies.account

),

prices as (

    select * from {{ ref('int_platform__subscription_price_history') }}

),

per_subscription as (

    select
        grid.account,
        grid.month_start,
        grid.currency,
        subscriptions.subscription_id,
        subscriptions.is_paying,
        -- the amount in force at the month's start and at its end; the current one without history
        coalesce(at_start.monthly_amount, subscriptions.monthly_amount) as amount_at_start,
        coalesce(at_end.monthly_amount, subscriptions.monthly_amount) as amount_at_end,
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
        on grid.account = subscriptions.account
        and grid.currency = subscriptions.currency
        and grid.next_month_start > subscriptions.started_at
    left join prices as at_start
        on subscriptions.account = at_start.account
        and subscriptions.subscription_id = at_start.subscription_id
        and (at_start.valid_from is null or grid.month_start >= at_start.valid_from)
        and (at_start.valid_to is null or grid.month_start < at_start.valid_to)
    left join prices as at_end
        on subscriptions.account = at_end.account
        and subscriptions.subscription_id = at_end.subscription_id
        and (at_end.valid_from is null or grid.next_month_start >= at_end.valid_from)
        and (at_end.valid_to is null or grid.next_month_start < at_end.valid_to)

),

aggregated as (

    select
        account,
        month_start,
        currency,
        sum(case when is_active_at_end then 1 else 0 end) as count_active_subscriptions,
        sum(case when is_active_at_start then 1 else 0 end) as count_active_at_start,
        sum(case when is_new then 1 else 0 end) as count_new_subscriptions,
        sum(case when is_churned then 1 else 0 end) as count_churned_subscriptions,
        sum(case when is_churned and is_active_at_start then 1 else 0 end) as count_churned_from_start,
        sum(case when is_active_at_end and is_paying then amount_at_end else 0 end) as mrr_amount,
        sum(case when is_new and is_paying then amount_at_end else 0 end) as new_mrr_amount,
        sum(
            case
                when is_active_at_start and is_active_at_end and is_paying and amount_at_end > amount_at_start
                    then amount_at_end - amount_at_start
                else 0
            end
        ) as expansion_mrr_amount,
        sum(
            case
                when is_active_at_start and is_active_at_end and is_paying and amount_at_end < amount_at_start
                    then amount_at_start - amount_at_end
                else 0
            end
        ) as contraction_mrr_amount,
        -- a subscription that started and ended in the month leaves as it came (at its end amount)
        sum(
            case
                when is_churned and is_paying and is_active_at_start then amount_at_start
                when is_churned and is_paying then amount_at_end
                else 0
            end
        ) as churned_mrr_amount
    from per_subscription
    group by account, month_start, currency

),

final as (

    select
        grid.account,
        {{ surrogate_key(['grid.month_start', 'grid.currency']) }} as month_currency_key,
        grid.month_start,
        grid.currency,
        -- amounts as money: a sum of zeros would otherwise print as 0, not 0.000000, on PostgreSQL
        {%- for amount in ['mrr', 'new_mrr', 'expansion_mrr', 'contraction_mrr', 'churned_mrr'] %}
            cast(coalesce(aggregated.{{ amount }}_amount, 0) as {{ type_money() }}) as {{ amount }}_amount,
        {%- endfor %}
        coalesce(aggregated.count_active_subscriptions, 0) as count_active_subscriptions,
        coalesce(aggregated.count_active_at_start, 0) as count_active_at_start,
        coalesce(aggregated.count_new_subscriptions, 0) as count_new_subscriptions,
        coalesce(aggregated.count_churned_subscriptions, 0) as count_churned_subscriptions,
        {{ safe_divide('aggregated.count_churned_from_start', 'aggregated.count_active_at_start') }} as churn_rate
    from grid
    left join aggregated
        on grid.account = aggregated.account
        and grid.month_start = aggregated.month_start
        and grid.currency = aggregated.currency

)

select * from final

-- The MRR of each month and currency equals the monthly amounts of the paying subscriptions of
-- fct_subscriptions that had started before the month's end and had not ended by then, each at the
-- amount in force at the month's end (its price history, else its current amount), recomputed here
-- independently of the mart's own logic.
with months as (

    select
        account,
        month_start,
        currency,
        mrr_amount,
        cast({{ dbt.dateadd('month', '1', 'month_start') }} as {{ type_timestamptz() }}) as month_end
    from {{ ref('subscriptions_mrr_monthly') }}

),

expected as (

    select
        months.account,
        months.month_start,
        months.currency,
        months.mrr_amount,
        coalesce(sum(coalesce(prices.monthly_amount, subscriptions.monthly_amount)), 0) as expected_mrr_amount
    from months
    left join {{ ref('fct_subscriptions') }} as subscriptions
        on months.account = subscriptions.account
        and months.currency = subscriptions.currency
        and subscriptions.subscription_status not in ('trial', 'free')
        and months.month_end > subscriptions.started_at
        and (subscriptions.ended_at is null or months.month_end <= subscriptions.ended_at)
    left join {{ ref('int_platform__subscription_price_history') }} as prices
        on subscriptions.account = prices.account
        and subscriptions.subscription_id = prices.subscription_id
        and (prices.valid_from is null or months.month_end >= prices.valid_from)
        and (prices.valid_to is null or months.month_end < prices.valid_to)
    group by months.account, months.month_start, months.currency, months.mrr_amount

)

select *
from expected
where abs(mrr_amount - expected_mrr_amount) > 0.005

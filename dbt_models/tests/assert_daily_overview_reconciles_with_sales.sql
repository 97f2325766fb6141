-- Per currency, the daily overview adds up to fct_sales: every sale created, paid and refunded is
-- counted exactly once, with its gross, net, fees and refunded amounts.
with overview as (

    select
        account,
        currency,
        sum(count_sales) as count_sales,
        sum(count_paid_sales) as count_paid_sales,
        sum(count_refunded_sales) as count_refunded_sales,
        sum(gross_amount) as gross_amount,
        sum(net_amount) as net_amount,
        sum(fees_amount) as fees_amount,
        sum(refunded_amount) as refunded_amount
    from {{ ref('daily_sales_overview') }}
    group by account, currency

),

sales as (

    select
        account,
        currency,
        count(*) as count_sales,
        sum(case when was_paid then 1 else 0 end) as count_paid_sales,
        sum(case when is_refunded then 1 else 0 end) as count_refunded_sales,
        sum(case when was_paid then gross_amount else 0 end) as gross_amount,
        sum(case when was_paid then net_amount else 0 end) as net_amount,
        sum(case when was_paid then total_fees_amount else 0 end) as fees_amount,
        sum(case when is_refunded then refunded_amount else 0 end) as refunded_amount
    from {{ ref('fct_sales') }}
    group by account, currency

)

select
    coalesce(overview.account, sales.account) as account,
    coalesce(overview.currency, sales.currency) as currency,
    overview.count_sales as overview_count_sales,
    sales.count_sales,
    overview.gross_amount as overview_gross_amount,
    sales.gross_amount
from overview
-- null-safe: sales whose currency the API left null are a group of their own on both sides (an
-- equality, not `is not distinct from`: PostgreSQL full-joins only on hashable conditions)
full outer join sales
    on overview.account = sales.account
    and coalesce(overview.currency, '_null_') = coalesce(sales.currency, '_null_')
where
    overview.count_sales is null
    or sales.count_sales is null
    or overview.count_sales != sales.count_sales
    or overview.count_paid_sales != sales.count_paid_sales
    or overview.count_refunded_sales != sales.count_refunded_sales
    or overview.gross_amount is distinct from coalesce(sales.gross_amount, 0)
    or overview.net_amount is distinct from coalesce(sales.net_amount, 0)
    or overview.fees_amount is distinct from coalesce(sales.fees_amount, 0)
    or overview.refunded_amount is distinct from coalesce(sales.refunded_amount, 0)
